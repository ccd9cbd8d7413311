"""The per-video cache (a ``VideoStatsSource`` wrapper) and what it is built of (``algebras.video_cache``)."""
