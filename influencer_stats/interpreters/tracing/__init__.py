"""Tracing with OpenTelemetry: request spans for the edge, wrappers of the algebras, the clients' hooks."""
