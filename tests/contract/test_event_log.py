"""The EventLog contract, run against every interpreter."""

from __future__ import annotations

import io
from collections.abc import Callable

import orjson
import pytest

from influencer_stats.algebras import EventLog
from influencer_stats.interpreters.logging.dropping import DroppingEventLog
from influencer_stats.interpreters.logging.silent import SilentEventLog
from influencer_stats.interpreters.logging.structlog_json import StructlogEventLog
from influencer_stats.testing.event_log import CapturingEventLog


class Sink:
    """A log plus a way to see what it wrote (None: it writes nothing by design)."""

    def __init__(self, log: EventLog, written: Callable[[], list[dict[str, object]]] | None) -> None:
        self.log = log
        self.written = written


def _json_sink() -> Sink:
    stream = io.BytesIO()
    return Sink(
        StructlogEventLog(stream),
        lambda: [orjson.loads(line) for line in stream.getvalue().splitlines()],
    )


def _dropping_sink() -> Sink:
    inner = CapturingEventLog()
    log = DroppingEventLog(inner, lambda: 0.0, limit=100)

    def written() -> list[dict[str, object]]:
        log.flush()
        return [{"event": e.event, "level": e.level, **e.fields} for e in inner.events]

    return Sink(log, written)


SINKS: dict[str, Callable[[], Sink]] = {
    "all": _json_sink,
    "dropping": _dropping_sink,
    "silent": lambda: Sink(SilentEventLog(), None),
    "capturing": lambda: Sink(
        (c := CapturingEventLog()),
        lambda: [{"event": e.event, "level": e.level, **e.fields} for e in c.events],
    ),
}


@pytest.fixture(params=list(SINKS))
def sink(request: pytest.FixtureRequest) -> Sink:
    return SINKS[request.param]()


def test_every_level_accepts_an_event_with_fields_without_raising(sink: Sink) -> None:
    sink.log.debug("d", a=1)
    sink.log.info("i", b="two")
    sink.log.warning("w", c=[1, 2], d=None)
    sink.log.error("e", e=True, f=1.5)

    if sink.written is not None:
        assert [(r["event"], r["level"]) for r in sink.written()] == [
            ("d", "debug"),
            ("i", "info"),
            ("w", "warning"),
            ("e", "error"),
        ]


def test_fields_are_kept_with_their_values(sink: Sink) -> None:
    sink.log.info("collection.saved", collection="c-1", videos=3, created=True)

    if sink.written is not None:
        [record] = sink.written()
        assert {k: record[k] for k in ("collection", "videos", "created")} == {
            "collection": "c-1",
            "videos": 3,
            "created": True,
        }


def test_the_json_logger_writes_one_json_object_per_line_with_a_timestamp() -> None:
    stream = io.BytesIO()
    log = StructlogEventLog(stream)

    log.info("one")
    log.info("two", n=2)

    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    assert all("timestamp" in orjson.loads(line) for line in lines)
