"""The EventLog contract, run against every registered logger and log wrapper.

Each is built by the composition root's own builder, writing to a buffer; what
it wrote is read after the root has closed it (a buffering logger flushes
then). A logger writes every event, in order, as one JSON line, unless its
entry declares it silent by design. What a wrapper is for shows in the
scenario its entry names (``Entry.scenario``), run against an inner log.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import orjson
import pytest

from influencer_stats.algebras import EventLog
from influencer_stats.algebras.event_log import LOG_CONTEXT
from influencer_stats.bootstrap.logs import LOG_WRAPPERS, LOGGERS, LogWrapper
from influencer_stats.bootstrap.registry import Entry
from influencer_stats.interpreters.logging.structlog_json import StructlogEventLog
from influencer_stats.testing.event_log import CapturingEventLog
from tests.contract.wired import KEY, wired
from tests.support import RecordingMetrics

#: Every registered logger with its usual wrappers, and every wrapper around the JSON logger.
STACKS = [(name, None) for name in LOGGERS.names()] + [("all", wrapper) for wrapper in LOG_WRAPPERS.names()]
Use = Callable[[EventLog], None]
STDOUT = "stdout"
Record = dict[str, object]


async def _output(
    tmp_path: Path,
    logger: str,
    wrappers: str | None,
    use: Use,
    environ: dict[str, str] | None = None,
    youtube_url: str | None = None,
) -> bytes:
    """What the ``logger`` stack wrote of the events ``use`` logged, read after it closed, from
    where its entry declares it writes them (``Entry.events``)."""
    stdout = io.BytesIO()
    flags = {"logger": logger} | ({"log_wrappers": wrappers} if wrappers else {})
    async with wired(tmp_path, flags, stdout=stdout, environ=environ, youtube_url=youtube_url) as wiring:
        use(wiring.log)
    declared = LOGGERS[logger].events
    if declared == STDOUT:
        return stdout.getvalue()
    return await asyncio.to_thread(Path(getattr(wiring.settings, declared)).read_bytes)


async def _written(
    tmp_path: Path, logger: str, wrappers: str | None, use: Use, environ: dict[str, str] | None = None
) -> list[Record]:
    """The JSON objects of ``_output``, one a line."""
    return [
        orjson.loads(line) for line in (await _output(tmp_path, logger, wrappers, use, environ)).splitlines()
    ]


@pytest.fixture(params=STACKS, ids=[f"{n}+{w}" if w else n for n, w in STACKS])
def stack(request: pytest.FixtureRequest) -> tuple[str, str | None]:
    logger, wrappers = request.param
    return logger, wrappers


def _every_level(log: EventLog) -> None:
    log.debug("d", a=1)
    log.info("i", b="two")
    log.warning("w", c=[1, 2], d=None)
    log.error("e", e=True, f=1.5)


async def test_every_level_accepts_an_event_with_fields_and_writes_it_in_order(
    stack: tuple[str, str | None], tmp_path: Path
) -> None:
    written = await _written(tmp_path, *stack, _every_level)

    if LOGGERS[stack[0]].silent:
        assert written == []
    else:
        assert [(r["event"], r["level"]) for r in written] == [
            ("d", "debug"),
            ("i", "info"),
            ("w", "warning"),
            ("e", "error"),
        ]


async def test_events_below_the_log_level_setting_are_not_written(
    stack: tuple[str, str | None], tmp_path: Path
) -> None:
    written = await _written(tmp_path, *stack, _every_level, {"INFLUENCER_STATS_LOG_LEVEL": "warning"})

    expected = [] if LOGGERS[stack[0]].silent else [("w", "warning"), ("e", "error")]
    assert [(r["event"], r["level"]) for r in written] == expected


class _ReaderGone(io.BytesIO):
    """A stdout whose reader has gone (``main.py | head -1``): every write fails as a closed pipe does."""

    def write(self, data: object) -> int:
        raise BrokenPipeError(32, "Broken pipe")


async def test_a_stdout_whose_reader_has_gone_makes_no_call_raise(
    stack: tuple[str, str | None], tmp_path: Path
) -> None:
    logger, wrappers = stack
    flags = {"logger": logger} | ({"log_wrappers": wrappers} if wrappers else {})
    async with wired(tmp_path, flags, stdout=_ReaderGone()) as wiring:
        _every_level(wiring.log)
        _every_level(wiring.log)
    # Closing (a buffering logger flushes then) raised nothing either: the block ended.


async def test_fields_are_kept_with_their_values(stack: tuple[str, str | None], tmp_path: Path) -> None:
    written = await _written(
        tmp_path, *stack, lambda log: log.info("collection.saved", collection="c-1", videos=3, created=True)
    )

    if LOGGERS[stack[0]].silent:
        assert written == []
    else:
        [record] = written
        assert {k: record[k] for k in ("collection", "videos", "created")} == {
            "collection": "c-1",
            "videos": 3,
            "created": True,
        }


@pytest.mark.parametrize("logger", LOGGERS.names())
def test_every_logger_declares_stdout_or_a_file_among_its_paths_for_its_events(logger: str) -> None:
    entry = LOGGERS[logger]

    assert entry.events == STDOUT or entry.events in entry.paths, entry  # its folder made, in tmp in tests


def test_the_capturing_test_double_keeps_events_as_the_contract_says() -> None:
    log = CapturingEventLog()

    _every_level(log)
    log.info("collection.saved", collection="c-1")

    assert [(e.event, e.level) for e in log.events][:4] == [
        ("d", "debug"),
        ("i", "info"),
        ("w", "warning"),
        ("e", "error"),
    ]
    assert log.events[-1].fields == {"collection": "c-1"}


def test_the_json_logger_writes_one_json_object_per_line_with_a_timestamp() -> None:
    stream = io.BytesIO()
    log = StructlogEventLog(stream, level="debug")

    log.info("one")
    log.info("two", n=2)

    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    assert all("timestamp" in orjson.loads(line) for line in lines)


async def _flood(tmp_path: Path, wrapper: Entry[LogWrapper]) -> None:
    """Twice the rate limit in one go: some events reach the inner log, the rest are dropped and
    counted (``logs_dropped``) by the time the log is closed."""
    inner, metrics = CapturingEventLog(), RecordingMetrics()
    async with wired(tmp_path, {}) as wiring:
        logged = 2 * wiring.settings.log_rate_limit
        log = await wrapper.build(replace(wiring, metrics=metrics), inner)
        for n in range(logged):
            log.info("flood", n=n)
    reached = sum(event.event == "flood" for event in inner.events)

    assert 0 < reached < logged
    assert metrics.logs_dropped_total == logged - reached


SCENARIOS: dict[str, Callable[[Path, Entry[LogWrapper]], Awaitable[None]]] = {"flood": _flood}


@pytest.mark.parametrize("wrapper", list(LOG_WRAPPERS), ids=LOG_WRAPPERS.names())
async def test_each_wrapper_does_what_it_is_for_in_the_scenario_its_entry_names(
    wrapper: Entry[LogWrapper], tmp_path: Path
) -> None:
    scenario = SCENARIOS.get(wrapper.scenario or "")
    assert scenario is not None, f"{wrapper.name!r} names no scenario of this suite: {', '.join(SCENARIOS)}"
    async with asyncio.timeout(10):  # a wrapper that waits forever fails, and soon
        await scenario(tmp_path, wrapper)


async def test_each_line_has_an_iso_timestamp_the_request_fields_and_no_secret(
    stack: tuple[str, str | None], tmp_path: Path
) -> None:
    def use(log: EventLog) -> None:
        token = LOG_CONTEXT.set({"request_id": "req-1"})
        try:
            log.info("upstream.failed", detail=f"upstream refused {KEY} as a credential")
        finally:
            LOG_CONTEXT.reset(token)

    # The double's URL sets YOUTUBE_API_KEY: a secret of the settings, handed to every logger.
    # Read where the entry declares its events (a logger writing a file is read there).
    output = await _output(tmp_path, *stack, use, youtube_url="http://127.0.0.1:9/youtube/v3/videos")
    written = [orjson.loads(line) for line in output.splitlines()]

    assert KEY.encode() not in output
    if not LOGGERS[stack[0]].silent:
        [record] = written
        assert record["request_id"] == "req-1"
        assert datetime.fromisoformat(str(record["timestamp"])).tzinfo is not None
