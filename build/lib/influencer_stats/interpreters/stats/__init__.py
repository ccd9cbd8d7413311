"""Interpreters of ``CollectionStatsQuery``: computed, cached."""
