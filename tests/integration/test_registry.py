"""Every registered choice of every slot builds, works and closes, against local doubles.

Parametrized from the registries themselves: a name registered without a
working builder fails here, in CI, never at a user's start-up.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from returns.result import Success

from influencer_stats.bootstrap.registry import Slot
from influencer_stats.bootstrap.root import open_http_api
from influencer_stats.bootstrap.servers import SERVERS
from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.config.resolve import resolve
from influencer_stats.domain.models import CollectionId
from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from influencer_stats.servers import server as server_named
from influencer_stats.testing.youtube_double import running_double
from tests.shared_redis import shared_redis_url

CHOICES = [(slot, name) for slot in SLOTS.values() for name in slot.names() if slot.name != "server"]


@pytest.fixture
async def double_url() -> AsyncIterator[str]:
    async with running_double() as double:
        yield double.url


@pytest.fixture
def environ(double_url: str, tmp_path: Path) -> dict[str, str]:
    return {
        "YOUTUBE_API_URL": double_url,
        "INFLUENCER_STATS_DB": str(tmp_path / "registry.sqlite3"),
        "REDIS_URL": shared_redis_url(),
    }


@pytest.mark.parametrize(("slot", "name"), CHOICES, ids=[f"{s.name}={n}" for s, n in CHOICES])
async def test_every_registered_choice_builds_serves_stats_and_closes(
    slot: Slot, name: str, environ: dict[str, str]
) -> None:
    slot_name = slot.name
    # A real client of the same kind, so the wrapper and cache choices are not built around the fake.
    base = {"video_client": "aiohttp-batched"} if slot_name != "video_client" else {}
    settings = resolve(environ, {**base, slot_name: name})
    stdout = io.BytesIO()
    collection = CollectionId(f"registry-{slot_name}-{name}")
    videos = (synthetic_video_id(1), synthetic_video_id(2), synthetic_video_id(2))

    async with open_http_api(settings, stdout) as api:
        saved = await api.store.save(collection, videos)
        answer = await api.stats.stats(collection)

    assert isinstance(saved, Success)
    assert isinstance(answer, Success), answer
    assert answer.unwrap().stats.videos == 2
    started = [
        e for e in map(orjson.loads, stdout.getvalue().splitlines()) if e["event"] == "service.started"
    ]
    if settings.choices.one("logger") != "silent":
        assert started and all(started[0][s] == settings.choices.text(s) for s in SLOTS)


async def _asgi_lifespan(app: Any) -> list[str]:
    """Start and stop an ASGI app's lifespan; the messages it sent back."""
    inbox: asyncio.Queue[dict[str, str]] = asyncio.Queue()
    sent: list[str] = []
    for message in ("lifespan.startup", "lifespan.shutdown"):
        inbox.put_nowait({"type": message})

    async def send(message: dict[str, str]) -> None:
        sent.append(message["type"])

    await app({"type": "lifespan", "asgi": {"version": "3.0"}}, inbox.get, send)
    return sent


@pytest.mark.parametrize("server", SERVERS.names())
def test_every_registered_server_opens_and_closes_the_api_in_its_application(
    server: str, environ: dict[str, str]
) -> None:
    settings = resolve(environ, {"server": server, "video_client": "fake", "store": "dict"})
    opened: list[str] = []

    def open_and_note() -> Any:
        opened.append(server)
        return open_http_api(settings, io.BytesIO())

    chosen = server_named(server)
    app = chosen.app(open_and_note, settings)
    loop = asyncio.new_event_loop()
    try:
        if chosen.asgi:
            sent = loop.run_until_complete(_asgi_lifespan(app))
            assert sent == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
        elif server == "aiohttp":
            from aiohttp import web

            runner = web.AppRunner(app)
            loop.run_until_complete(runner.setup())
            loop.run_until_complete(runner.cleanup())
        else:
            app.__rsgi_init__(loop)
            app.__rsgi_del__(loop)
    finally:
        loop.close()

    assert opened == [server]
