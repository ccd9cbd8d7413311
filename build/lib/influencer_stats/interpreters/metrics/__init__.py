"""Interpreters of ``Metrics``."""
