"""perf/guarded.py for real, beside ``main.py --profile fast``: the same answers over real sockets.

The lab's ``guarded`` reference is only a yardstick if it keeps what ``fast`` keeps. Both run here
against the Python YouTube double (each with its stats cache, then both without), get the same
collections and the same requests, and every answer is compared: status, headers in order and
body bytes, all but the values of ``Date``, ``X-Request-Id`` (checked: echoed or 16 hex digits)
and ``Age`` (with the ttl of ``Cache-Status``, which moves with it). Their ``stats.computed`` log
lines are compared too (their metrics in the prometheus slice's test_prometheus_beside_guarded). Then the lab itself measures
``fast`` against ``guarded`` in its short mode. ``fast`` runs on what is installed (a choice of it
not installed stands in for by its slot's first, here and in ``perf.profiles.service_settings``,
which ``guarded`` reads). No timing is asserted.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from perf.flame_shares import shares
from perf.workload import ORIGINAL_COLLECTION, ORIGINAL_VIDEOS
from tests.integration.test_perf_lab import number, run_lab, table_row
from tests.support import (
    RunningService,
    instead_of_slices,
    profile_args,
    running_double_process,
    running_service,
    wait_for,
)

STATS_ROUTE = "/collections/{id}/stats"
#: Headers a server writes whatever the app: compared only when both answers come from one server.
SERVERS_OWN = frozenset({"server", "content-length", "transfer-encoding"})
EMPTY = "6f1c1f8e-5b0a-4b53-9d0c-6b7f2c1a9e01"
TWO_CALLS = "0a4e1c52-8d4b-4e43-9a55-0d2f1f1b8a11"
COLLECTIONS = {
    ORIGINAL_COLLECTION: [*ORIGINAL_VIDEOS, ORIGINAL_VIDEOS[0]],  # the lab's 3 videos, one listed twice
    EMPTY: [],
    # 60 distinct ids, one missing in the middle (ids starting with X are): two videos.list calls.
    TWO_CALLS: [
        *(synthetic_video_id(n) for n in range(30)),
        "Xdeleted_01",
        *(synthetic_video_id(n) for n in range(30, 59)),
    ],
}
#: What is asked after the collections are stored, by label: (path, X-Request-Id sent).
REQUESTS: list[tuple[str, str, str | None]] = [
    *(
        (f"{kind} {collection}", f"/collections/{collection}/stats", None)
        for collection in COLLECTIONS
        for kind in ("miss", "hit")  # with no cache: computed twice
    ),
    ("unknown collection", "/collections/no-such-collection/stats", None),
    ("invalid id (space)", "/collections/bad%20id/stats", None),
    ("invalid id (dollar)", "/collections/a$b/stats", None),
    ("invalid id (too long)", f"/collections/{'x' * 65}/stats", None),
    ("path outside ASCII", "/collections/%C3%A9/stats", None),
    ("request id echoed", f"/collections/{ORIGINAL_COLLECTION}/stats", "trace-42.a:b_c"),
    ("request id replaced", "/collections/no-such-collection/stats", "not a sane id!"),
    ("HEAD", f"/collections/{ORIGINAL_COLLECTION}/stats", None),
]
NEW_ID = re.compile(r"[0-9a-f]{16}")
Answer = tuple[int, list[tuple[str, str]], bytes]


@pytest.fixture(scope="module")
def double_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_double_process(tmp_path_factory.mktemp("double") / "double.log") as url:
        yield url


def _env(double_url: str) -> dict[str, str]:
    return {
        "YOUTUBE_API_URL": double_url,
        "YOUTUBE_API_KEY": "perf-test-key",
        "INFLUENCER_STATS_QUOTA_PER_DAY": "0",
    }


#: The in-process stats cache when installed (the ``stats_cache`` slice), and none.
CACHES = [name for name in ("stats", "none") if name in SLOTS["cache"].names()]


@pytest.fixture(scope="module", params=CACHES, ids=[f"cache={name}" for name in CACHES])
def cache(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def pair(
    cache: str, double_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[RunningService, RunningService]]:
    """``main.py --profile fast`` and ``python -m perf.guarded``, both with the stats cache ``cache``."""
    folder = tmp_path_factory.mktemp(f"cache-{cache}")
    env = _env(double_url)
    with (
        running_service([*profile_args("fast"), "--cache", cache], folder / "fast.log", env=env) as fast,
        running_service(
            ["--cache", cache],
            folder / "guarded.log",
            env=env,
            command=[sys.executable, "-m", "perf.guarded"],
        ) as guarded,
    ):
        yield fast, guarded


def _exchange(url: str) -> dict[str, Answer]:
    """Every collection stored, then every request of ``REQUESTS``, in order, on one connection."""
    answers: dict[str, Answer] = {}
    with httpx.Client(base_url=url, timeout=10) as client:
        for collection, videos in COLLECTIONS.items():
            response = client.put(f"/collections/{collection}", json={"videos": videos})
            answers[f"PUT {collection}"] = (
                response.status_code,
                list(response.headers.items()),
                response.content,
            )
        for label, path, request_id in REQUESTS:
            headers = {} if request_id is None else {"x-request-id": request_id}
            method = "HEAD" if label == "HEAD" else "GET"
            response = client.request(method, path, headers=headers)
            answers[label] = (response.status_code, list(response.headers.items()), response.content)
    return answers


@pytest.fixture(scope="module")
def exchanged(pair: tuple[RunningService, RunningService]) -> tuple[dict[str, Answer], dict[str, Answer]]:
    """The same exchange with each: ``fast``'s answers, then ``guarded``'s."""
    fast, guarded = pair
    return _exchange(fast.url), _exchange(guarded.url)


def _comparable(label: str, answer: Answer) -> tuple[int, list[tuple[str, str]], bytes]:
    """The answer without the values that differ by nature: date, a new request id, age (and ttl)."""
    status, headers, body = answer
    kept: list[tuple[str, str]] = []
    age = ttl = None
    for name, value in headers:
        if name == "date":
            continue
        if name == "x-request-id":
            sent = next((r for lab, _, r in REQUESTS if lab == label), None)
            if label == "request id echoed":
                assert value == sent, (label, value)
            else:
                assert NEW_ID.fullmatch(value), (label, value)
            value = "<request id>"
        elif name == "age":
            assert value.isdigit(), (label, value)
            age, value = int(value), "<age>"
        elif name == "cache-status" and "; hit; ttl=" in value:
            found = re.search(r"ttl=(-?\d+)", value)
            assert found is not None
            ttl, value = int(found[1]), value.replace(found[0], "ttl=<ttl>")
        kept.append((name, value))
    if age is not None and ttl is not None:
        assert age + ttl in (9, 10), (label, age, ttl)  # int(10 - a) + int(a): fresh within the 10 s TTL
    return status, kept, body


def _server(answer: Answer) -> str | None:
    """The Server header of ``answer``: which server wrote its head (None: one that does not say)."""
    return dict(answer[1]).get("server")


def _unordered(
    comparable: tuple[int, list[tuple[str, str]], bytes],
) -> tuple[int, list[tuple[str, str]], bytes]:
    status, headers, body = comparable
    return status, sorted(header for header in headers if header[0] not in SERVERS_OWN), body


def _events(service: RunningService, event: str) -> list[dict[str, object]]:
    lines = [json.loads(line) for line in service.output().splitlines() if line.startswith("{")]
    return [line for line in lines if line.get("event") == event]


def test_guarded_answers_what_fast_answers(
    cache: str, exchanged: tuple[dict[str, Answer], dict[str, Answer]]
) -> None:
    expected, answers = exchanged

    assert list(answers) == list(expected)
    for label in expected:
        mine, theirs = _comparable(label, answers[label]), _comparable(label, expected[label])
        if _server(answers[label]) != _server(expected[label]):
            # fast is not on guarded's server (Granian, its slice not installed): the order of the
            # headers, Server and the framing (a HEAD's Content-Length) are the servers'; the rest is
            # the app's and compared, the body byte for byte.
            mine, theirs = _unordered(mine), _unordered(theirs)
        assert mine == theirs, label
    # What the comparison covers, as the service answers it:
    status, headers, body = expected[f"hit {ORIGINAL_COLLECTION}"]
    assert (status, body) == (
        200,
        b'{"impressions":18760776,"engagements":383586,"score":710585,"videos":3,"missing":[]}',
    )
    names = [name for name, _ in headers]
    if cache == "stats":
        assert "age" in names and dict(headers)["cache-status"].startswith("influencer-stats; hit; ttl=")
        assert ("cache-status", "influencer-stats; fwd=miss; stored") in expected[
            f"miss {ORIGINAL_COLLECTION}"
        ][1]
    else:
        assert "age" not in names and "cache-status" not in names
    assert b'"missing":["Xdeleted_01"]' in expected[f"miss {TWO_CALLS}"][2]
    assert expected["unknown collection"][0] == 404
    assert [expected[f"invalid id ({k})"][0] for k in ("space", "dollar", "too long")] == [422, 422, 422]
    assert expected["path outside ASCII"][0] == 400
    assert dict(expected["invalid id (space)"][1])["content-type"] == "application/problem+json"


def test_guarded_logs_one_line_per_computed_stats_as_fast_does(
    cache: str, pair: tuple[RunningService, RunningService], exchanged: object
) -> None:
    fast, guarded = pair
    # The two collections with videos: once each with the cache (the rest are hits), else every GET.
    computed = 2 if cache == "stats" else 6

    assert wait_for(lambda: len(_events(guarded, "stats.computed")) >= computed, timeout=5)
    assert wait_for(lambda: len(_events(fast, "stats.computed")) >= computed, timeout=5)
    mine, theirs = _events(guarded, "stats.computed"), _events(fast, "stats.computed")
    assert len(mine) == len(theirs) == computed

    def without_time_and_id(lines: list[dict[str, object]]) -> list[dict[str, object]]:
        return [{k: v for k, v in line.items() if k not in ("timestamp", "request_id")} for line in lines]

    assert without_time_and_id(mine) == without_time_and_id(theirs)
    assert all(isinstance(line["request_id"], str) and line["request_id"] for line in mine)
    assert [list(line) for line in mine] == [list(line) for line in theirs]  # the same fields, in order


def test_the_lab_measures_fast_beside_guarded(tmp_path: Path) -> None:
    report, flames = tmp_path / "RESULTS.md", tmp_path / "flames"
    report.write_text("# old report\n")  # else the run starts from the record, with its hand-made tables
    # fast on what is installed: each choice of it not installed given its slot's first; with no
    # stats cache installed, only its uncached spec (beside guarded+cache=none).
    stand_ins = instead_of_slices("fast")
    base = "fast" + "".join(f"+{slot}={choice}" for slot, choice in stand_ins.items() if slot != "cache")
    paired = {f"{base}+cache=none": "guarded+cache=none"}
    if "cache" not in stand_ins:
        paired = {base: "guarded", **paired}

    done = run_lab(
        [
            "--profiles", ",".join(paired), "--reference", "guarded", "--short",
            "--out", str(tmp_path / "out"), "--report", str(report), "--flames", str(flames),
            "--chart", str(tmp_path / "chart.png"),
        ]
    )  # fmt: skip

    assert done.returncode == 0, f"perf/run.py exited {done.returncode}:\n{done.stderr[-4000:]}"
    text = report.read_text()
    header = table_row(text, "profile")
    for spec, reference in paired.items():
        assert table_row(text, spec)[header.index("reference")] == reference
    for name in (*paired, *paired.values()):
        assert number(table_row(text, name)[header.index("req/s")]) > 0, name
        assert b"<svg" in (flames / f"flame-{name}.svg").read_bytes()[:4096], name
    assert "What `guarded` keeps" in text
    assert "server CPU per request" in text  # a steadier ratio than req/s, round by round
    read = shares((flames / f"flame-{next(iter(paired.values()))}.svg").read_text())
    assert read.total > 0 and any(key.startswith("Guarded.") for key in read.inclusive)


def test_the_lab_refuses_to_pair_guarded_with_a_shared_cache(tmp_path: Path) -> None:
    done = run_lab(
        ["--profiles", "fast+cache=redis", "--reference", "guarded", "--short", "--out", str(tmp_path / "o")]
    )

    assert done.returncode == 2, done.stderr
    assert "cache=redis" in done.stderr
    assert not (tmp_path / "o").exists()
