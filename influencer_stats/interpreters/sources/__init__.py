"""Interpreters of ``CollectionSources``: in process, SQLite, Redis."""
