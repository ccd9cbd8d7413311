"""The history routes through ``HttpApi``, over a history in memory: pages, steps, growth, errors.

``tests/integration/test_history.py`` proves every server answers them the same, with real
snapshots, a restart and two processes on one Redis.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from returns.result import Result

from influencer_stats.algebras.history import DAY_S, StatsHistory
from influencer_stats.domain.history import StatsPoint
from influencer_stats.domain.models import CollectionId, StoreUnavailable
from influencer_stats.http.history_routes import HISTORY_ROUTES, PART, HistoryPart
from influencer_stats.http.problems import Reply
from influencer_stats.interpreters.history.memory import MemoryStatsHistory
from influencer_stats.interpreters.history.retention import Retention
from tests.unit.http_api_support import (
    Service,
    assert_head_like_get,
    assert_methods_answered,
    assert_problem,
    header,
    service,
)
from tests.unit.http_api_support import document as _document

DAY = 86_400.0
MIDNIGHT = 1_764_806_400.0  # 2025-12-04T00:00:00Z
ONE = CollectionId("one")


def _body(reply: Reply) -> Any:
    """The JSON body, to index into freely."""
    return _document(reply)


def history_service(history: StatsHistory | None = None, timeout_s: float = 10.0) -> Service:
    """The API with the history's part, over ``history`` (else one in memory), as the slice wires it."""
    history = history or MemoryStatsHistory(Retention(raw_s=30 * DAY_S, keep_s=400 * DAY_S), 1_000)
    return service(
        parts=lambda store, log: {PART: HistoryPart(store, history, log, timeout_s)},
        forgets=[history.forget],
    )


async def _with_points(*points: StatsPoint) -> Service:
    history = MemoryStatsHistory(Retention(raw_s=30 * DAY_S, keep_s=400 * DAY_S), 1_000)
    api = history_service(history)
    await api.put("one", {"videos": []})
    for point in points:
        await history.record(ONE, point)
    return api


def _point(hours: float, n: int, *, gap: bool = False) -> StatsPoint:
    if gap:
        return StatsPoint(MIDNIGHT + hours * 3_600, 0, 0, 0, 0, 0, gap=True)
    return StatsPoint(MIDNIGHT + hours * 3_600, impressions=n, engagements=n, score=n, videos=1, missing=0)


async def test_points_come_oldest_first_a_page_at_a_time_until_no_next() -> None:
    api = await _with_points(*(_point(h, h) for h in range(5)))

    first = _body(await api.get("/collections/one/history?limit=2"))
    second = _body(await api.get(f"/collections/one/history?limit=2&cursor={first['next']}"))
    third = _body(await api.get(f"/collections/one/history?limit=2&cursor={second['next']}"))

    assert [p["impressions"] for p in first["points"]] == [0, 1]
    assert [p["impressions"] for p in second["points"]] == [2, 3]
    assert third == {
        "points": [
            {
                "at": "2025-12-04T04:00:00.000Z",
                "impressions": 4,
                "engagements": 4,
                "score": 4,
                "videos": 1,
                "missing": 0,
                "gap": False,
            }
        ]
    }


async def test_since_and_until_bound_the_points_and_a_step_keeps_each_steps_last_figures() -> None:
    api = await _with_points(
        _point(1, 1), _point(2, 2), _point(3, 0, gap=True), _point(25, 25), _point(49, 49)
    )

    ranged = _body(
        await api.get("/collections/one/history?since=2025-12-04T02:00:00Z&until=2025-12-06T01:00:00%2B00:00")
    )
    daily = _body(await api.get("/collections/one/history?step=1d&limit=2"))

    assert [p["impressions"] for p in ranged["points"]] == [2, 0, 25]
    assert [p["impressions"] for p in daily["points"]] == [2, 25]  # a gap never over figures
    assert daily["next"] == str(round((MIDNIGHT + 2 * DAY) * 1000))


async def test_growth_compares_the_first_snapshot_since_with_the_last() -> None:
    api = await _with_points(_point(0, 100), _point(1, 150), _point(2, 0, gap=True), _point(3, 300))

    growth = _body(await api.get("/collections/one/growth?since=2025-12-04T00:30:00Z"))

    assert growth["since"] == "2025-12-04T00:30:00.000Z"
    assert growth["from"]["impressions"] == 150
    assert growth["to"]["impressions"] == 300
    assert growth["change"]["impressions"] == {"absolute": 150, "relative": 1.0}


async def test_growth_without_a_snapshot_since_then_is_a_404_problem() -> None:
    api = await _with_points(_point(0, 100))

    reply = await api.get("/collections/one/growth?since=2025-12-05T00:00:00Z")

    assert str(assert_problem(reply, 404)["type"]).endswith("no-snapshots")


async def test_bad_queries_are_422_problems_naming_the_parameter() -> None:
    api = await _with_points()

    for query, field in [
        ("history?since=yesterday", "since"),
        ("history?until=2025-12-04", "until"),
        ("history?step=1w", "step"),
        ("history?limit=0", "limit"),
        ("history?cursor=abc", "cursor"),
        ("history?step=1h&step=1d", "step"),
        ("growth", "since"),
        ("growth?since=2025-13-01T00:00:00Z", "since"),
    ]:
        problem = assert_problem(await api.get(f"/collections/one/{query}"), 422)
        assert problem["field"] == field, query


async def test_an_unknown_collection_has_no_history_but_a_404() -> None:
    api = history_service()

    assert_problem(await api.get("/collections/nobody/history"), 404)
    assert_problem(await api.get("/collections/nobody/growth?since=2025-12-04T00:00:00Z"), 404)


async def test_deleting_a_collection_deletes_its_history() -> None:
    api = await _with_points(_point(0, 1))

    assert (await api.request("DELETE", "/collections/one")).status == 204
    await api.put("one", {"videos": []})

    assert _body(await api.get("/collections/one/history")) == {"points": []}


async def test_the_chart_is_an_svg_with_both_series_and_a_tick_per_gap() -> None:
    api = await _with_points(_point(0, 1), _point(1, 0, gap=True), _point(2, 4))

    reply = await api.get("/collections/one/history.svg?step=1h")
    empty = await (await _with_points()).get("/collections/one/history.svg")

    assert (reply.status, reply.content_type) == (200, "image/svg+xml")
    svg = reply.body.decode()
    assert svg.startswith("<svg ") and "<script" not in svg
    assert svg.count('class="series ') == 2 and svg.count('class="gap"') == 1
    assert "no snapshots in this range yet" in empty.body.decode()
    assert_problem(await api.get("/collections/nobody/history.svg"), 404)
    assert_problem(await api.get("/collections/one/history.svg?limit=5000"), 422)


def _labels(svg: str, kind: str) -> list[tuple[str, str]]:
    """Each label of that kind (``value`` or ``time``): its y and its text."""
    return re.findall(rf'<text class="{kind}" x="[0-9.]+" y="([0-9.]+)"[^>]*>([^<]*)</text>', svg)


async def test_the_chart_labels_each_panel_with_its_range_and_the_axis_with_its_ends() -> None:
    api = await _with_points(_point(0, 1_000), _point(1, 1_500), _point(2, 2_250))

    svg = (await api.get("/collections/one/history.svg")).body.decode()

    assert [text for _, text in _labels(svg, "value")] == ["2,250", "1,000", "2,250", "1,000"]
    assert [text for _, text in _labels(svg, "time")] == [
        "2025-12-04T00:00:00.000Z",
        "2025-12-04T02:00:00.000Z",
    ]


async def test_a_flat_series_is_labelled_once_beside_its_line_and_a_single_instant_once() -> None:
    flat = await _with_points(_point(0, 1_234_567), _point(1, 1_234_567), _point(2, 1_234_567))
    single = await _with_points(_point(0, 42))

    flat_svg = (await flat.get("/collections/one/history.svg")).body.decode()
    single_svg = (await single.get("/collections/one/history.svg")).body.decode()

    values = _labels(flat_svg, "value")
    assert [text for _, text in values] == ["1,234,567", "1,234,567"]  # one a panel, not two
    lines = re.findall(r'class="series \w+"[^>]* points="[0-9.]+,([0-9.]+) ', flat_svg)
    assert [float(y) for y, _ in values] == [float(y) + 4 for y in lines]  # beside the line
    assert [text for _, text in _labels(single_svg, "value")] == ["42", "42"]
    assert [text for _, text in _labels(single_svg, "time")] == ["2025-12-04T00:00:00.000Z"]


class NeverAnswers(MemoryStatsHistory):
    """A history whose reads never finish (a query stuck in its backend); it counts the
    reads cancelled."""

    def __init__(self) -> None:
        super().__init__(Retention(raw_s=30 * DAY, keep_s=400 * DAY), 10)
        self.cancelled = 0

    async def _forever(self) -> Result[tuple[StatsPoint, ...], StoreUnavailable]:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        raise AssertionError("unreachable")

    async def points(
        self, collection_id: CollectionId, since: float, until: float, limit: int
    ) -> Result[tuple[StatsPoint, ...], StoreUnavailable]:
        return await self._forever()

    async def thinned(
        self, collection_id: CollectionId, since: float, until: float, step: int, limit: int
    ) -> Result[tuple[StatsPoint, ...], StoreUnavailable]:
        return await self._forever()


async def test_a_history_query_past_its_deadline_is_stopped_and_answered_a_503_problem() -> None:
    history = NeverAnswers()
    api = history_service(history, timeout_s=0.01)
    await api.put("one", {"videos": []})

    for query in ("history", "history?step=1d", "history.svg", "growth?since=2025-12-04T00:00:00Z"):
        reply = await api.get(f"/collections/one/{query}")
        problem = assert_problem(reply, 503)
        assert str(problem["type"]).endswith(":history-query-timeout"), query
        assert "0.01 s" in str(problem["detail"])
        assert header(reply, "retry-after") == "1"

    assert history.cancelled == 4  # each read was cancelled, not left running
    timeouts = api.log.named("history.query_timeout")
    assert [(e.level, e.fields["collection"]) for e in timeouts] == [("warning", "one")] * 4


async def test_each_history_route_answers_its_methods_and_head_like_get() -> None:
    api = await _with_points(_point(0, 1))
    # "c" is unknown (404s) for the method checks; then known, with points, for HEAD against GET.
    await assert_methods_answered(api, HISTORY_ROUTES.routes)
    await api.put("c", {"videos": []})
    await assert_head_like_get(api, HISTORY_ROUTES.routes)


async def test_a_history_page_links_to_the_next_keeping_its_range_step_and_limit() -> None:
    api = await _with_points(*(_point(h, h) for h in range(5)))

    first = await api.get(
        "/collections/one/history?since=2025-12-04T00:00:00Z&until=2025-12-05T00:00:00Z&limit=2"
    )
    stepped = await api.get("/collections/one/history?step=2h&limit=1")
    last = await api.get("/collections/one/history?limit=10")

    link = f"/collections/one/history?until=2025-12-05T00:00:00Z&limit=2&cursor={_body(first)['next']}"
    assert header(first, "link") == f'<{link}>; rel="next"'
    followed = await api.get(link)
    assert [p["impressions"] for p in _body(followed)["points"]] == [2, 3]
    assert (
        header(stepped, "link")
        == f'</collections/one/history?step=2h&limit=1&cursor={_body(stepped)["next"]}>; rel="next"'
    )
    assert header(last, "link") is None


async def test_each_history_answer_carries_its_tag_and_a_client_holding_it_gets_a_304() -> None:
    api = await _with_points(_point(0, 1), _point(1, 2))

    for path in (
        "/collections/one/history",
        "/collections/one/history.svg",
        "/collections/one/growth?since=2025-12-04T00:00:00Z",
    ):
        first = await api.get(path)
        tag = header(first, "etag")
        again = await api.get(path, if_none_match=tag)

        assert tag is not None and first.status == 200, path
        assert (again.status, again.body, again.content_type) == (304, b"", ""), path
        assert header(again, "etag") == tag


async def test_a_new_snapshot_changes_the_historys_tag() -> None:
    history = MemoryStatsHistory(Retention(raw_s=30 * DAY_S, keep_s=400 * DAY_S), 1_000)
    api = history_service(history)
    await api.put("one", {"videos": []})
    await history.record(ONE, _point(0, 1))
    tag = header(await api.get("/collections/one/history"), "etag")
    await history.record(ONE, _point(1, 2))

    changed = await api.get("/collections/one/history", if_none_match=tag)

    assert changed.status == 200 and header(changed, "etag") != tag
