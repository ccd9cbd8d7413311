"""A collection's history over HTTP: the queries of ``/history`` and ``/growth``, and their pages.

Times are RFC 3339 (``2026-12-04T12:00:00Z``, any offset, fractions of a second); ``step``
is a whole number of seconds, minutes, hours or days (``90s``, ``15m``, ``1h``, ``1d``): one
point per step, the step's last that is not a gap (as the retention keeps days). A page
answers ``{"points": [...], "next": "<cursor>"}``, ``next`` only when more follow; the cursor
is where the next page starts (milliseconds since the epoch, passed back unchanged).
"""

from __future__ import annotations

import math
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import parse_qsl

from returns.result import Failure, Result, Success

from influencer_stats.algebras.history import StatsHistory
from influencer_stats.domain.history import StatsPoint
from influencer_stats.domain.models import CollectionId, StoreUnavailable
from influencer_stats.domain.validation import InvalidInput
from influencer_stats.http.pagination import DEFAULT_LIMIT, MAX_LIMIT
from influencer_stats.http.problems import Reply, problem

#: The history's route templates (``history_routes``).
HISTORY = "/collections/{id}/history"
GROWTH = "/collections/{id}/growth"
HISTORY_CHART = "/collections/{id}/history.svg"
#: The latest time RFC 3339 can write (the end of year 9999): ``until``'s default.
END_OF_TIME = 253_402_300_800.0
STEP_PATTERN = "^[1-9][0-9]{0,5}[smhd]$"
HISTORY_CURSOR_PATTERN = "^[0-9]{1,15}$"
_RFC3339 = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})[Tt]([0-9]{2}:[0-9]{2}):([0-9]{2})(\.[0-9]{1,9})?([Zz]|[+-][0-9]{2}:[0-9]{2})"
)
_STEP = re.compile(STEP_PATTERN.strip("^$"))
_CURSOR = re.compile(HISTORY_CURSOR_PATTERN.strip("^$"))
_LIMIT = re.compile("[0-9]{1,7}")
_UNITS = {"s": 1, "m": 60, "h": 3_600, "d": 86_400}
#: Points read from the history per call, and calls per request at most (bounded work).
_CHUNK, _READS = 1_000, 100
#: A step longer than every time RFC 3339 can write after 1970: ``thinned`` by it is the last figures.
_ALL_TIME = 2**40


@dataclass(frozen=True, slots=True)
class HistoryRequest:
    """Points with ``since <= at < until``, one per ``step`` seconds (None: every one), ``limit`` a page."""

    since: float = 0.0
    until: float = END_OF_TIME
    step: int | None = None
    limit: int = DEFAULT_LIMIT


def parse_time(name: str, raw: str) -> Result[float, InvalidInput]:
    """An RFC 3339 time as Unix seconds (a leap second read as the second before it)."""
    match = _RFC3339.fullmatch(raw)
    if match is not None:
        day, hours_minutes, seconds, fraction, offset = match.groups()
        offset = "+00:00" if offset in ("Z", "z") else offset
        try:
            moment = datetime.fromisoformat(f"{day}T{hours_minutes}:{min(int(seconds), 59):02d}{offset}")
            return Success(moment.timestamp() + float(fraction or 0))
        except ValueError:
            pass
    return Failure(InvalidInput(name, _clip(raw), "must be an RFC 3339 time, e.g. 2026-12-04T12:00:00Z"))


def parse_history_request(query: str, *, limit: int = DEFAULT_LIMIT) -> Result[HistoryRequest, InvalidInput]:
    """``since``, ``until``, ``step``, ``limit`` (``limit`` when not given) and ``cursor`` (which
    overrides ``since``)."""
    given: dict[str, str] = {}
    for name, value in parse_qsl(query, keep_blank_values=True):
        if name in ("since", "until", "step", "limit", "cursor"):
            if name in given:
                return Failure(InvalidInput(name, _clip(value), "must be given at most once"))
            given[name] = value
    times = {"since": 0.0, "until": END_OF_TIME}
    for name in times:
        if name in given:
            parsed = parse_time(name, given[name])
            if not isinstance(parsed, Success):
                return Failure(parsed.failure())
            times[name] = parsed.unwrap()
    step = None
    if "step" in given:
        raw = given["step"]
        if not _STEP.fullmatch(raw):
            return Failure(
                InvalidInput("step", _clip(raw), "must be a whole number of s, m, h or d, e.g. 1h")
            )
        step = int(raw[:-1]) * _UNITS[raw[-1]]
    if "limit" in given:
        raw = given["limit"]
        if not _LIMIT.fullmatch(raw) or not 1 <= int(raw) <= MAX_LIMIT:
            return Failure(InvalidInput("limit", _clip(raw), f"must be an integer from 1 to {MAX_LIMIT}"))
        limit = int(raw)
    if "cursor" in given:
        raw = given["cursor"]
        if not _CURSOR.fullmatch(raw):
            return Failure(InvalidInput("cursor", _clip(raw), "must be a page's next, unchanged"))
        times["since"] = int(raw) / 1000
    return Success(HistoryRequest(times["since"], times["until"], step, limit))


async def _points(
    history: StatsHistory, collection_id: CollectionId, since: float, until: float
) -> AsyncIterator[Sequence[StatsPoint] | StoreUnavailable]:
    """The points from ``since`` to ``until``, a read (``_CHUNK`` points) at a time, at most
    ``_READS`` reads; a read that fails ends them with its error."""
    start = since
    for _ in range(_READS):
        read = await history.points(collection_id, start, until, _CHUNK)
        if not isinstance(read, Success):
            yield read.failure()
            return
        points = read.unwrap()
        yield points
        if len(points) < _CHUNK:
            return
        start = math.nextafter(points[-1].at, math.inf)


async def history_page(
    history: StatsHistory, collection_id: CollectionId, request: HistoryRequest
) -> Result[tuple[list[StatsPoint], int | None], StoreUnavailable]:
    """A page: at most ``limit`` points (one per step), and where the next page starts (ms) when
    more follow (``history_body`` renders it). With a step the history thins the points itself
    (``StatsHistory.thinned``): a coarse step never reads every point."""
    if request.step is not None:
        step = request.step
        thinned = await history.thinned(collection_id, request.since, request.until, step, request.limit + 1)
        if not isinstance(thinned, Success):
            return Failure(thinned.failure())
        steps = list(thinned.unwrap())
        if len(steps) > request.limit:  # the next page starts at the next step's start
            return Success((steps[: request.limit], math.floor(steps[-1].at // step * step * 1000)))
        return Success((steps, None))
    kept: list[StatsPoint] = []
    reads = 0
    last: Sequence[StatsPoint] = ()  # the last read's points
    async for points in _points(history, collection_id, request.since, request.until):
        if isinstance(points, StoreUnavailable):
            return Failure(points)
        for point in points:
            if len(kept) == request.limit:
                return Success((kept, math.floor(point.at * 1000)))
            kept.append(point)
        reads, last = reads + 1, points
    if reads == _READS and len(last) == _CHUNK:  # the reads ran out, not the points
        return Success((kept, math.ceil(math.nextafter(last[-1].at, math.inf) * 1000)))
    return Success((kept, None))


async def growth_body(
    history: StatsHistory, collection_id: CollectionId, since: float
) -> Result[dict[str, object] | None, StoreUnavailable]:
    """The change of each figure from the first snapshot at or after ``since`` that is not a gap
    to the last one; None when there is none. The first is read from ``since`` on (its first
    points, unless they are gaps), the last as the figures of one step spanning all time."""
    first: StatsPoint | None = None
    async for points in _points(history, collection_id, since, END_OF_TIME):
        if isinstance(points, StoreUnavailable):
            return Failure(points)
        first = next((point for point in points if not point.gap), None)
        if first is not None:
            break
    if first is None:
        return Success(None)
    ends = await history.thinned(collection_id, first.at, END_OF_TIME, _ALL_TIME, 2)
    if not isinstance(ends, Success):
        return Failure(ends.failure())
    last = next((point for point in reversed(ends.unwrap()) if not point.gap), first)
    change = {}
    for figure in ("impressions", "engagements", "score", "videos"):
        before, after = getattr(first, figure), getattr(last, figure)
        change[figure] = {
            "absolute": after - before,
            "relative": None if before == 0 else (after - before) / before,
        }
    return Success(
        {"since": rfc3339(since), "from": point_body(first), "to": point_body(last), "change": change}
    )


def point_body(point: StatsPoint) -> dict[str, object]:
    return {
        "at": rfc3339(point.at),
        "impressions": point.impressions,
        "engagements": point.engagements,
        "score": point.score,
        "videos": point.videos,
        "missing": point.missing,
        "gap": point.gap,
    }


def rfc3339(seconds: float) -> str:
    """Unix seconds as RFC 3339 in UTC, to the millisecond."""
    return (
        datetime.fromtimestamp(math.floor(seconds * 1000) / 1000, UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def history_body(points: list[StatsPoint], next_ms: int | None) -> dict[str, object]:
    """The page as ``/history`` answers it."""
    body: dict[str, object] = {"points": [point_body(p) for p in points]}
    if next_ms is not None:
        body["next"] = str(next_ms)
    return body


def _clip(value: str, limit: int = 100) -> str:
    return value if len(value) <= limit else value[:limit] + "…"


def query_timeout(seconds: float) -> Reply:
    """503: a history query ran past its deadline and was stopped."""
    return problem(
        503,
        "history-query-timeout",
        "History query took too long",
        f"the query did not finish within {seconds:g} s and was stopped; ask for a narrower range or a coarser step",
        headers=(("retry-after", "1"),),
    )
