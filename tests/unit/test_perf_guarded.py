"""The lab's ``guarded`` reference in parts: it keeps the service's rules and renderings (checked
against the service's own code, not a copy), the lab pairs profiles with it on request, and the
flame-graph reader counts what a graph holds.

tests/integration/test_perf_guarded.py runs it beside the service over real sockets.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from influencer_stats.bootstrap.edge import ROUTES
from influencer_stats.domain.models import (
    CollectionId,
    CollectionNotFound,
    InvalidUpstreamData,
    QuotaExceeded,
    UpstreamError,
    UpstreamMisconfigured,
    UpstreamTimeout,
    UpstreamUnavailable,
)
from influencer_stats.domain.validation import parse_collection_id
from influencer_stats.http import api, conditional, incoming, problems
from influencer_stats.http.routes import COLLECTION, STATS
from influencer_stats.http.stats_reply import cache_headers
from perf import guarded_answers as answers
from perf.flame_shares import function_key, shares
from perf.model import CEILING, Flame, Measurement
from perf.options import parse_args
from perf.references import (
    GUARDED,
    GUARDED_KEEPS,
    GUARDED_LEAVES_OUT,
    GUARDED_UNCACHED,
    REFERENCE_CLIENTS,
    REFERENCES,
    reference_for,
    references_section,
    round_plan,
    unpairable,
)
from perf.rounds import reference_row
from perf.specs import lab_choices
from tests.unit.test_perf_references import measured

# --- The service's rules and renderings ------------------------------------------------------


def test_guarded_takes_the_services_request_ids_routes_labels_and_body_limit() -> None:
    assert answers.REQUEST_ID.pattern == incoming._REQUEST_ID.pattern
    assert (answers.STATS_ROUTE, answers.COLLECTION_ROUTE) == (STATS, COLLECTION)
    assert {STATS, COLLECTION} <= set(ROUTES)
    assert answers.MAX_REQUEST_BODY == api.MAX_BODY_BYTES
    assert len(incoming.new_request_id()) == 16  # guarded's new ids: 16 hex digits too


@pytest.mark.parametrize("raw", ["bad id", "a$b", "x" * 65, "y" * 300])
def test_an_invalid_id_is_the_services_422_byte_for_byte(raw: str) -> None:
    failure = parse_collection_id(raw).failure()
    service = problems.invalid_input(failure)

    assert answers.invalid(failure) == (service.status, service.content_type, service.headers, service.body)


@pytest.mark.parametrize(
    "error",
    [
        CollectionNotFound(CollectionId("nope")),
        UpstreamTimeout("a videos.list call took over 1s"),
        InvalidUpstreamData("videos.list count is not canonical"),
        UpstreamMisconfigured("YouTube answered 400 keyInvalid"),
        UpstreamUnavailable("YouTube answered 503 backendError"),
        QuotaExceeded("YouTube answered 403 quotaExceeded", retry_after_s=3600),
    ],
    ids=lambda e: type(e).__name__,
)
def test_each_failure_is_the_services_problem_byte_for_byte(
    error: CollectionNotFound | UpstreamError,
) -> None:
    service = problems.for_error(error)

    assert answers.failed(error) == (service.status, service.content_type, service.headers, service.body)


def test_the_path_outside_ascii_is_the_services_400() -> None:
    service = problems.path_not_ascii()

    assert (service.status, service.content_type, service.headers, service.body) == answers.NOT_ASCII


@pytest.mark.parametrize(
    ("ttl_left", "age", "stale"),
    [(9.7, 0.3, None), (0.2, 9.8, None), (-3.5, 13.5, "revalidating"), (-250.0, 260.0, "stale-if-error")],
)
def test_cache_headers_are_the_services_and_rendered_once_per_whole_second(
    ttl_left: float, age: float, stale: str | None
) -> None:
    from influencer_stats.domain.models import CacheInfo

    entry = answers.Entry(b"{}", 0.0)
    first = entry.reply(ttl_left, age, stale)
    again = entry.reply(ttl_left - 0.001, age + 0.001, stale)  # the same whole seconds

    etag = ("etag", conditional.etag_of(b"{}"))
    assert first == (
        200,
        "application/json",
        (etag, *cache_headers(CacheInfo(True, age, ttl_left, stale))),
        b"{}",
    )
    assert again[2] is first[2]


@pytest.mark.parametrize("if_none_match", ["*", "W/{tag}", '"other", {tag}', '"{opaque}-gzip"', '"other"'])
def test_a_304_is_answered_when_and_as_the_service_answers_it(if_none_match: str) -> None:
    entry = answers.Entry(b'{"videos":[]}', 0.0)
    reply = entry.reply(9.0, 1.0, None)
    tag = reply[2][0][1]
    given = if_none_match.format(tag=tag, opaque=tag[1:-1])
    service = conditional.not_modified(problems.Reply(200, reply[3], reply[1], reply[2]), given)

    revalidated = answers.revalidated(reply, given)

    assert (revalidated[0], revalidated[2], revalidated[3]) == (service.status, service.headers, service.body)


def test_metrics_are_recorded_in_their_buckets_and_rendered_with_their_names() -> None:
    # That they are the service's is tests/unit/test_prometheus_guarded.py's (the prometheus slice).
    metrics = answers.Metrics()
    metrics.request(STATS, "GET", 200, 0.0004)
    metrics.request(STATS, "GET", 200, 0.003)
    metrics.request(STATS, "GET", 404, 0.0005)
    text = metrics.render().decode()

    assert f'{answers.REQUESTS}_total{{method="GET",route="{STATS}",status="200"}} 2' in text
    assert (
        f'{answers.LATENCY}_bucket{{route="{STATS}",le="0.0005"}} 2' in text
    )  # le: a bound is its own bucket
    assert f'{answers.LATENCY}_bucket{{route="{STATS}",le="+Inf"}} 3' in text
    assert f'{answers.LATENCY}_count{{route="{STATS}"}} 3' in text
    assert len(metrics.latency[STATS]) == len(answers.LATENCY_BUCKETS) + 1


# --- The lab pairs profiles with it on request ---------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "reference"),
    [
        ("fast", GUARDED),
        ("fast+cache=none", GUARDED_UNCACHED),
        ("v5", GUARDED),
        ("fast+server=starlette", GUARDED),  # any server: the comparison then includes the server's cost
    ],
)
def test_reference_guarded_pairs_each_profile_by_its_cache(spec: str, reference: str) -> None:
    assert reference_for(lab_choices(spec), GUARDED) == reference
    assert unpairable(lab_choices(spec), GUARDED) is None


def test_a_profile_with_a_shared_cache_cannot_stand_beside_guarded() -> None:
    assert unpairable(lab_choices("fast+cache=redis"), GUARDED) == (
        "guarded has an in-process stats cache or none, not cache=redis"
    )
    assert unpairable(lab_choices("fast+cache=redis"), "auto") is None


def test_both_guarded_references_are_known_rows_calling_the_batched_client() -> None:
    assert {GUARDED, GUARDED_UNCACHED} <= set(REFERENCES)
    assert REFERENCE_CLIENTS[GUARDED] == REFERENCE_CLIENTS[GUARDED_UNCACHED] == "aiohttp-batched"
    pairs = [("fast", GUARDED), ("fast+cache=none", GUARDED_UNCACHED)]
    assert round_plan(pairs) == [
        (CEILING, None), (GUARDED, None), ("fast", GUARDED), (GUARDED_UNCACHED, None), ("fast+cache=none", GUARDED_UNCACHED),
    ]  # fmt: skip


def test_the_cli_takes_reference_guarded_and_refuses_others() -> None:
    assert parse_args([]).reference == "auto"
    assert parse_args(["--reference", "guarded"]).reference == GUARDED
    with pytest.raises(SystemExit):
        parse_args(["--reference", "minimal"])


def test_the_report_says_what_guarded_keeps_and_leaves_out() -> None:
    section = references_section([GUARDED, GUARDED_UNCACHED, CEILING], [("fast", GUARDED)])

    assert "`guarded` (`perf/guarded.py`)" in section and "Paired here with `fast`" in section
    assert all(f"- {item}" in section for item in (*GUARDED_KEEPS, *GUARDED_LEAVES_OUT))
    assert "What `guarded` keeps" not in references_section([CEILING], [("v4", CEILING)])


def test_a_reference_row_carries_the_flame_graph_of_its_last_round(tmp_path: Path) -> None:
    flame = Flame(tmp_path / "flame-guarded.svg", None, samples=10)
    rounds = [[measured(GUARDED, 100)], [measured(GUARDED, 300)], [measured(GUARDED, 200)]]
    rounds[-1][0] = dataclasses.replace(rounds[-1][0], flame=flame)

    row = reference_row(rounds)

    assert row.rps == 200 and row.flame == flame


# --- Reading flame graphs ------------------------------------------------------------------------


def _frame(title: str, depth: int, x: int, w: int) -> str:
    y = 52 + 16 * depth
    return f'<g><title>{title} ({w} samples, 1%)</title><rect x="0%" y="{y}" width="1%" height="15" fill="red" fg:x="{x}" fg:w="{w}"/></g>'


def test_a_function_counts_once_per_stack_and_its_own_samples_are_what_no_child_took() -> None:
    svg = "".join(
        [
            _frame("all", 0, 0, 10),
            _frame("serve (a.py:1)", 1, 0, 8),
            _frame("handle (b.py:3)", 2, 0, 6),
            _frame("serve (a.py:9)", 3, 0, 2),  # recursion: serve again, inside handle
            _frame("render (c.py:4)", 2, 6, 1),
            _frame("idle (d.py:2)", 1, 8, 2),
        ]
    )

    found = shares(svg)

    assert found.total == 10
    assert found.inclusive["serve (a.py)"] == 8  # not 10: the nested frame is in the same stacks
    assert found.own["serve (a.py)"] == 1 + 2  # 8 - (6 + 1) at the top, 2 at the bottom
    assert found.inclusive["handle (b.py)"] == 6 and found.own["handle (b.py)"] == 4
    assert found.share("render (c.py)") == pytest.approx(0.1)
    assert (
        function_key("Guarded.__rsgi__ (perf/guarded.py:231) (3 samples, 1.2%)")
        == "Guarded.__rsgi__ (perf/guarded.py)"
    )


def test_a_previous_report_without_sections_keeps_nothing() -> None:
    from perf.report_sections import hand_written

    assert hand_written("# old report\n", "## Results\n") == []  # it used to raise (zip of unequal lists)
    assert hand_written("# old\n\n## Mine\n\nkept\n", "## Results\n") == ["## Mine\n\nkept"]


# --- Server CPU per request: steadier than req/s on a shared machine ------------------------------


def test_cpu_per_request_is_compared_round_by_round() -> None:
    from perf.rounds import compare, comparison_note

    def with_cpu(name: str, rps: float, cpu_s: float) -> Measurement:
        return dataclasses.replace(measured(name, rps), cpu_s=cpu_s)

    # 10 s passes (measured() makes rps * 10 requests): 40 µs and 50 µs per request, then 20 and 20.
    references = [with_cpu(GUARDED, 1000, 0.4), with_cpu(GUARDED, 2000, 0.4)]
    profiles = [with_cpu("fast", 1000, 0.5), with_cpu("fast", 1500, 0.3)]

    c = compare(profiles, references, GUARDED)

    assert profiles[0].cpu_us_per_request == pytest.approx(50.0)
    assert c.cpu_by_round == pytest.approx((1.25, 1.0))
    assert c.cpu == pytest.approx(1.125)
    assert "server CPU per request 1.25× / 1.00× (median 1.12×)" in comparison_note(c)
    assert measured("fast", 1000).cpu_us_per_request is None


def test_cpu_of_a_process_tree_grows_as_it_works() -> None:
    import os

    from perf.procs import cpu_of_tree

    before = cpu_of_tree(os.getpid())
    sum(i * i for i in range(2_000_000))

    assert cpu_of_tree(os.getpid()) > before
