"""Tracing: the span the HTTP edge opens around each request it answers, and the spans a slice
opens around its own calls."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Protocol


class RequestSpan(Protocol):
    """The span of one request, while it is answered."""

    @property
    def trace_id(self) -> str:
        """The trace's id, 32 lowercase hex digits (what the log lines of the request carry)."""
        ...

    def answered(self, status: int) -> None:
        """Record the HTTP status the request was answered with."""
        ...


class RequestTracing(Protocol):
    """Server spans around requests, children of the caller's trace when it sent one.

    Contract: ``request`` never raises on a malformed ``traceparent`` (W3C
    Trace Context); it starts a new trace instead. The span is the current
    one inside the ``with`` block, so what the request calls nests under it,
    and it ends when the block exits (an exception escaping it is recorded).
    Task-safe. Without tracing the edge holds none and pays nothing.
    """

    def request(
        self, method: str, route: str, traceparent: str | None
    ) -> AbstractContextManager[RequestSpan]:
        """The span of a ``method`` request to the route template ``route``."""
        ...


class Span(Protocol):
    """An internal span, while what it times runs (``Spans.span``)."""

    def note(self, name: str, value: str | int) -> None:
        """Record an attribute of what was done (a count, a kind)."""
        ...

    def failed(self, error: object) -> None:
        """Mark it failed with an expected failure (its type, its ``detail`` if it has one)."""
        ...


class Spans(Protocol):
    """Internal spans a slice opens around its own calls, without naming the tracing library.

    Contract: the span is the current one inside the ``with`` block (what it calls nests under
    it, and an outgoing call carries its ``traceparent``) and ends when the block exits.
    Task-safe. Without tracing there is none (``Tracing.spans()`` is None) and nothing is paid.
    """

    def span(self, name: str, attributes: Mapping[str, str | int]) -> AbstractContextManager[Span]:
        """A span named ``name`` (``sources.read``) with ``attributes``."""
        ...
