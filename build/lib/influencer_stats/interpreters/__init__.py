"""Interpreters: every side effect, one module per implementation.

Each receives built resources in its constructor and never reads the
environment; only the composition root (``influencer_stats.bootstrap``)
imports them.
"""
