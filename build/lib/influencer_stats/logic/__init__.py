"""The functional core: pure aggregation and the thin async orchestration."""
