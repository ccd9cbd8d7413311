"""The stats caches (the ``stats_cache`` slice): wrappers of ``CollectionStatsQuery`` in process
(``cache``), in Redis (``redis_cache``), and in process kept correct by Redis (``near_cache``, fed
by ``tracking``)."""
