"""The servers a stack's choices need (``Entry.needs``), started for those choices only.

``resolve_needing`` resolves a test's settings; when a chosen entry declares ``"redis"`` it
points ``REDIS_URL`` at this process's Redis container, when one declares ``"otlp"`` it asks
for the ``otlp_receiver`` fixture (``tests/integration/conftest.py``). Otherwise the server
stays unstarted (no Docker for the stack), its address is a closed loopback port, and
asking ``Resources.once`` for it (the ``redis`` slice's client is the shared resource named
``redis``) fails the test: a builder that reaches a server its entry does not declare fails
there, whatever its slot.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

import pytest

from influencer_stats.bootstrap.registry import Entry
from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.bootstrap.wiring import Resources
from influencer_stats.config.resolve import resolve
from influencer_stats.settings import Settings
from tests.shared_redis import shared_redis_url, unique_prefix

#: Every server an entry may declare it needs: what a test starts for it.
SERVERS = ("redis", "otlp")
#: Where nothing listens (the discard port): a server no chosen entry declares.
CLOSED = "127.0.0.1:9"


def chosen(settings: Settings) -> Iterator[Entry[Any]]:
    """The registry entry of every choice of ``settings``, every slot."""
    for slot in SLOTS.values():
        for name in settings.choices[slot.name]:
            yield slot.registry[name]


def needs(settings: Settings) -> set[str]:
    """The servers the choices of ``settings`` declare they need."""
    return {need for entry in chosen(settings) for need in entry.needs}


def _refusing(servers: set[str]) -> Callable[..., Awaitable[Any]]:
    """``Resources.once`` failing for a shared resource named as one of ``servers`` (a client of it)."""
    once = Resources.once

    async def refused(self: Resources, name: str, build: Callable[[], Awaitable[Any]]) -> Any:
        if name in servers:
            raise AssertionError(f"a builder asked for {name}: declare needs=({name!r},) on its entry")
        return await once(self, name, build)

    return refused


def resolve_needing(
    request: pytest.FixtureRequest, environ: Mapping[str, str], flags: Mapping[str, str]
) -> Settings:
    """``resolve(environ, flags)`` with the servers its choices need, and only those, running."""
    need = needs(resolve({**environ, "REDIS_URL": f"redis://{CLOSED}"}, flags))
    assert need <= set(SERVERS), f"no test starts {sorted(need - set(SERVERS))} (tests/needs.py)"
    monkeypatch: pytest.MonkeyPatch = request.getfixturevalue("monkeypatch")
    if "redis" in need:
        redis = {"REDIS_URL": shared_redis_url(), "INFLUENCER_STATS_REDIS_PREFIX": unique_prefix()}
    else:
        redis = {"REDIS_URL": f"redis://{CLOSED}"}
        monkeypatch.setattr(Resources, "once", _refusing({"redis"}))
    if "otlp" in need:
        request.getfixturevalue("otlp_receiver")
    else:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://{CLOSED}")
    return resolve({**environ, **redis}, flags)
