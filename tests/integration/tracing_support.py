"""What the tracing suites share: the spans' receiver, the YouTube double and the services on each
server, as module fixtures, and the reading of a trace. The tracing slice's (its files), as every
``test_tracing*`` suite is."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from influencer_stats.bootstrap.videos import batches
from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from tests.integration.youtube_clients_support import YouTubeDouble
from tests.otlp_receiver import ReceivedSpan, Receiver, running_receiver
from tests.support import (
    A_YOUTUBE_CLIENT,
    SERVERS,
    RunningService,
    running_double_process,
    running_service,
    wait_for,
)
from youtube_double import VIDEOS_PATH

VIDEOS = [synthetic_video_id(n) for n in range(2 if batches(A_YOUTUBE_CLIENT) else 1)]  # one videos.list call
#: Export within 50 ms of a span ending, not the SDK's 5 s: the test waits for what it checks.
OTEL = {"OTEL_BSP_SCHEDULE_DELAY": "50", "OTEL_SERVICE_NAME": "influencer-stats-under-test"}
SPANS_WITHIN_S = 10.0


def new_traceparent() -> tuple[str, str, str]:
    """A caller's ``traceparent``, its trace id and its span id (sampled)."""
    trace_id, span_id = secrets.token_hex(16), secrets.token_hex(8)
    return f"00-{trace_id}-{span_id}-01", trace_id, span_id


def one_span(spans: list[ReceivedSpan], name: str) -> ReceivedSpan:
    named = [span for span in spans if span.name == name]
    assert len(named) == 1, [span.name for span in spans]
    return named[0]


def wait_for_trace(receiver: Receiver, trace_id: str, *names: str) -> list[ReceivedSpan]:
    def arrived() -> bool:
        return {*names} <= {span.name for span in receiver.trace(trace_id)}

    assert wait_for(arrived, SPANS_WITHIN_S), [s.name for s in receiver.trace(trace_id)]
    return receiver.trace(trace_id)


def log_lines(service: RunningService) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in service.output().splitlines() if line.startswith("{")]


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    with running_receiver() as running:
        yield running


@pytest.fixture(scope="module")
def youtube(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, YouTubeDouble]]:
    with running_double_process(tmp_path_factory.mktemp("double") / "double.log") as url:
        yield url, YouTubeDouble(url.removesuffix(VIDEOS_PATH))


@pytest.fixture(scope="module", params=SERVERS)
def service(
    request: pytest.FixtureRequest,
    receiver: Receiver,
    youtube: tuple[str, YouTubeDouble],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[RunningService]:
    args = ["--profile", "demo", "--server", request.param, "--video-client", A_YOUTUBE_CLIENT]
    env = {"YOUTUBE_API_URL": youtube[0], "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, **OTEL}
    log = tmp_path_factory.mktemp(f"service-{request.param}") / "service.log"
    with running_service([*args, "--tracing", "otel"], log, env=env) as running:
        yield running
