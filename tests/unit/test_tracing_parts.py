"""Tracing's small parts: a cache's decision as span attributes, the extra it needs, the last flush's bound."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from influencer_stats.bootstrap.slices import tracing
from influencer_stats.config.resolve import ConfigError, resolve
from influencer_stats.domain.models import CacheInfo
from influencer_stats.interpreters.tracing.otel import cache_decision


@pytest.mark.parametrize(
    ("cache", "decision"),
    [
        (None, {"cache.result": "miss"}),
        (CacheInfo(False, 0.0, 10.0), {"cache.result": "miss"}),
        (CacheInfo(True, 2.0, 8.0), {"cache.result": "hit", "cache.age_s": 2.0}),
        (CacheInfo(True, 12.0, -2.0, "revalidating"), {
            "cache.result": "stale", "cache.age_s": 12.0, "cache.stale_reason": "revalidating"
        }),
        (CacheInfo(True, 3.0, 5.0, "quota-exhausted"), {
            "cache.result": "stale", "cache.age_s": 3.0, "cache.stale_reason": "quota-exhausted"
        }),
    ],
)  # fmt: skip
def test_a_cache_decision_is_hit_stale_or_miss(cache: CacheInfo | None, decision: dict[str, object]) -> None:
    assert cache_decision(cache) == decision


def test_tracing_is_off_unless_chosen() -> None:
    assert resolve({}).choices.one("tracing") == "none"
    assert resolve({"INFLUENCER_STATS_TRACING": "otel"}).choices.one("tracing") == "otel"


def _missing(name: str) -> None:
    """``find_spec`` where no opentelemetry is installed: a dotted name's parent cannot be imported."""
    raise ModuleNotFoundError(f"No module named {name.split('.')[0]!r}", name=name.split(".")[0])


@pytest.mark.parametrize("find_spec", [lambda _: None, _missing], ids=["sdk-missing", "package-missing"])
def test_choosing_otel_without_the_extra_installed_is_refused_naming_an_install_that_works(
    monkeypatch: pytest.MonkeyPatch, find_spec: Callable[[str], None]
) -> None:
    monkeypatch.setattr(tracing, "find_spec", find_spec)

    with pytest.raises(ConfigError) as refused:
        resolve({}, {"tracing": "otel"})

    message = str(refused.value)
    assert message.startswith("tracing 'otel' needs the otel extra: ")
    assert "pip install -e '.[otel]'" in message and "--build-arg EXTRAS=otel" in message
    assert "\n" not in message


def test_the_last_flush_gets_two_seconds_or_half_the_graceful_shutdown_if_less() -> None:
    assert tracing.flush_budget_s(resolve({})) == tracing.FLUSH_S == 2.0
    assert tracing.flush_budget_s(resolve({"INFLUENCER_STATS_GRACEFUL_SHUTDOWN": "1"})) == 0.5


async def test_a_shutdown_that_ends_within_its_budget_is_waited_for() -> None:
    ended: list[str] = []

    await tracing.shut_down_within(lambda: ended.append("shut down"), 60.0)

    assert ended == ["shut down"]


async def test_a_shutdown_still_blocked_at_its_budget_is_left_to_the_process_exit() -> None:
    release, ended = threading.Event(), threading.Event()

    def blocked() -> None:  # an export to a collector that never answers
        release.wait(60.0)
        ended.set()

    await tracing.shut_down_within(blocked, 0.01)

    assert not ended.is_set()
    release.set()
    assert ended.wait(60.0)
