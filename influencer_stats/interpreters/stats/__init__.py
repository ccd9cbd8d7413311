"""Wrappers of ``CollectionStatsQuery`` (the use case, ``logic.service.GetStats``): the stats caches."""
