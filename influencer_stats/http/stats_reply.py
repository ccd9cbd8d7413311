"""The stats answer as HTTP: its JSON body and its cache headers, each rendered once and reused.

A stats request is the hottest path of the service. A cache hands back the very
same frozen ``CollectionStats`` object until its entry is replaced, and its
``Cache-Status``/``Age`` change once a second, so both renderings are kept and
reused instead of being built on every hit.
"""

from __future__ import annotations

import orjson

from influencer_stats.domain.models import CacheInfo, CollectionId, CollectionStats
from influencer_stats.memo import BoundedMemo

#: Bound of each memo (their keys come from the cache, not from clients).
MEMO_ENTRIES = 4096
_MISS_HEADERS = (("cache-status", "influencer-stats; fwd=miss; stored"),)
#: Rendered header pairs by (whole seconds of ttl, of age, stale reason).
_HIT_HEADERS: BoundedMemo[tuple[int, int, str | None], tuple[tuple[str, str], ...]] = BoundedMemo(
    MEMO_ENTRIES
)


def stats_body(stats: CollectionStats) -> bytes:
    """The JSON the API answers for ``stats``."""
    return orjson.dumps(
        {
            "impressions": stats.impressions,
            "engagements": stats.engagements,
            "score": stats.score,
            "videos": stats.videos,
            "missing": stats.missing,
        }
    )


def cache_headers(cache: CacheInfo) -> tuple[tuple[str, str], ...]:
    """RFC 9211 ``Cache-Status`` (ttl < 0 means stale) and RFC 9111 ``Age``, in whole seconds."""
    if not cache.hit:
        return _MISS_HEADERS
    key = (int(cache.ttl_s), int(cache.age_s), cache.stale_reason)
    headers = _HIT_HEADERS.get(key)
    if headers is None:
        ttl, age, reason = key
        status = f"influencer-stats; hit; ttl={ttl}" + ("" if reason is None else f"; detail={reason}")
        headers = _HIT_HEADERS.keep(key, (("cache-status", status), ("age", str(age))))
    return headers


class CachedBodies:
    """The body last rendered per collection, reused while the same stats object comes back.

    Identity, not equality: the object held here cannot be freed and its address reused,
    and a new entry in the cache (after a write or a refresh) is a new object.
    """

    def __init__(self) -> None:
        self._rendered: BoundedMemo[CollectionId, tuple[CollectionStats, bytes]] = BoundedMemo(MEMO_ENTRIES)

    def body(self, collection_id: CollectionId, stats: CollectionStats) -> bytes:
        rendered = self._rendered.get(collection_id)
        if rendered is None or rendered[0] is not stats:
            rendered = self._rendered.keep(collection_id, (stats, stats_body(stats)))
        return rendered[1]
