"""Interpreters of ``StatsHistory``: in process, SQLite, Redis."""
