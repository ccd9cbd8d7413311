"""A stats history in Redis, shared by every worker and host (valid on a Cluster)."""

from __future__ import annotations

from typing import cast

from returns.result import Failure, Result, Success

from influencer_stats.algebras.history import DAY_S
from influencer_stats.domain.history import StatsPoint
from influencer_stats.domain.models import CollectionId, StoreUnavailable
from influencer_stats.interpreters.history.retention import Retention
from influencer_stats.interpreters.redis_faults import REDIS_FAULTS, store_unavailable
from influencer_stats.interpreters.redis_interval_claims import claim_in_redis
from influencer_stats.interpreters.redis_keys import RedisKeys
from influencer_stats.interpreters.redis_topology import RedisClient

#: KEYS[1] the history; ARGV: at, the point's member, drop before, raw from, a day, expiry (ms).
#: The point replaces one at the same time; then the retention: points before ``drop before``
#: go, and of those before ``raw from``, each day keeps its last point that is not a gap (its
#: last gap when all are). Members are ``at|impressions|engagements|score|videos|missing|gap``.
_RECORD = """
local key = KEYS[1]
redis.call('ZREMRANGEBYSCORE', key, ARGV[1], ARGV[1])
redis.call('ZADD', key, ARGV[1], ARGV[2])
redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. ARGV[3])
local old = redis.call('ZRANGEBYSCORE', key, '-inf', '(' .. ARGV[4], 'WITHSCORES')
local width = tonumber(ARGV[5])
local kept, kept_gap = {}, {}
for i = 1, #old, 2 do
    local member = old[i]
    local day = math.floor(tonumber(old[i + 1]) / width)
    local gap = string.sub(member, -1) == '1'
    local held = kept[day]
    if held ~= nil and gap and not kept_gap[day] then
        redis.call('ZREM', key, member)
    else
        if held ~= nil then
            redis.call('ZREM', key, held)
        end
        kept[day], kept_gap[day] = member, gap
    end
end
redis.call('PEXPIRE', key, ARGV[6])
return 1
"""


#: Members read per call walking a group back, and members walked at most (a group of gaps).
_PAGE, _MAX_GROUP = 32, 10_000_000


class RedisStatsHistory:
    """``StatsHistory`` in one sorted set per collection (``RedisKeys.history``), by time.

    A ``record`` is one script on the collection's key (one slot, so valid on a
    Cluster), the point and the collection's retention at once; the key
    expires ``keep_s`` after its last record (by then nothing in it is kept).
    A history of ``raw_s / interval`` raw points plus one a day is at most a
    few thousand members, so the script's scan of the old part stays small.
    A Redis or socket error is ``StoreUnavailable``.
    """

    def __init__(self, client: RedisClient, keys: RedisKeys, retention: Retention) -> None:
        self._redis = client
        self._keys = keys
        self._retention = retention

    async def record(self, collection_id: CollectionId, point: StatsPoint) -> Result[None, StoreUnavailable]:
        retention = self._retention
        member = "|".join(
            (repr(point.at), *(str(n) for n in (point.impressions, point.engagements, point.score)),
             str(point.videos), str(point.missing), "1" if point.gap else "0")
        )  # fmt: skip
        args = (
            repr(point.at),
            member,
            repr(point.at - retention.keep_s),
            repr(point.at - retention.raw_s),
            repr(DAY_S),
            max(1, round(retention.keep_s * 1000)),
        )
        try:
            await self._redis.eval(_RECORD, 1, self._keys.history(collection_id), *args)
        except REDIS_FAULTS as exc:
            return Failure(store_unavailable(exc))
        return Success(None)

    async def points(
        self, collection_id: CollectionId, since: float, until: float, limit: int
    ) -> Result[tuple[StatsPoint, ...], StoreUnavailable]:
        try:
            members = cast(
                "list[bytes]",
                await self._redis.zrangebyscore(
                    self._keys.history(collection_id), repr(since), f"({until!r}", start=0, num=limit
                ),
            )
        except REDIS_FAULTS as exc:
            return Failure(store_unavailable(exc))
        return Success(tuple(_decode(m) for m in members))

    async def thinned(
        self, collection_id: CollectionId, since: float, until: float, step: int, limit: int
    ) -> Result[tuple[StatsPoint, ...], StoreUnavailable]:
        """Per step, the group's first member (where it starts), then members from its end back,
        ``_PAGE`` at a time, to its last that is not a gap."""
        key = self._keys.history(collection_id)
        kept: list[StatsPoint] = []
        start = since
        try:
            for _ in range(limit):
                first = cast(
                    "list[bytes]",
                    await self._redis.zrangebyscore(key, repr(start), f"({until!r}", start=0, num=1),
                )
                if not first:
                    break
                bucket = _decode(first[0]).at // step * step
                end = min(bucket + step, until)
                chosen = await self._last_figures(key, start, end)
                if chosen is None:  # forgotten meanwhile
                    break
                kept.append(chosen)
                start = bucket + step
        except REDIS_FAULTS as exc:
            return Failure(store_unavailable(exc))
        return Success(tuple(kept))

    async def _last_figures(self, key: str, start: float, end: float) -> StatsPoint | None:
        """The last point with ``start <= at < end`` that is not a gap, else the last, if any."""
        last: StatsPoint | None = None
        for offset in range(0, _MAX_GROUP, _PAGE):
            members = cast(
                "list[bytes]",
                await self._redis.zrevrangebyscore(key, f"({end!r}", repr(start), start=offset, num=_PAGE),
            )
            points = [_decode(m) for m in members]
            last = last or (points[0] if points else None)
            figures = next((p for p in points if not p.gap), None)
            if figures is not None:
                return figures
            if len(points) < _PAGE:
                break
        return last

    async def forget(self, collection_id: CollectionId) -> Result[None, StoreUnavailable]:
        try:
            await self._redis.delete(
                self._keys.history(collection_id), self._keys.history_claim(collection_id)
            )
        except REDIS_FAULTS as exc:
            return Failure(store_unavailable(exc))
        return Success(None)

    async def claim(self, collection_id: CollectionId, slot: int) -> Result[bool, StoreUnavailable]:
        expiry_ms = max(1, round(self._retention.keep_s * 1000))
        return await claim_in_redis(self._redis, self._keys.history_claim(collection_id), slot, expiry_ms)


def _decode(member: bytes | str) -> StatsPoint:
    text = member.decode() if isinstance(member, bytes) else member
    at, impressions, engagements, score, videos, missing, gap = text.split("|")
    return StatsPoint(
        float(at), int(impressions), int(engagements), int(score), int(videos), int(missing), gap == "1"
    )
