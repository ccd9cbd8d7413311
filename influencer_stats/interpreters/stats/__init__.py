"""What the stats query's wrappers share with the core: ``CachePolicy`` and ``InvalidatingStore``
(the caches themselves are the ``stats_cache`` slice's, ``interpreters/stats_cache``)."""
