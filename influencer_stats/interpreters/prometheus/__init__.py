"""Slice ``prometheus``: the Prometheus interpreter of ``AllMetrics``, its families, snapshots and collectors."""
