"""Interpreters of ``VideoStatsSource`` besides the YouTube base and the per-video cache: the fake base
(and the synthetic statistics it shares with the YouTube double), the breaker, the deadline, batching."""
