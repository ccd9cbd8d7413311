"""Interpreters of ``VideoStatsSource``."""
