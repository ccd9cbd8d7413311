"""Interpreters of ``EventLog``."""
