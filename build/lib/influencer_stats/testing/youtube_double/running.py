"""Running the double on a real socket inside a test's event loop."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from aiohttp import web

from influencer_stats.testing.youtube_double.app import create_app
from influencer_stats.testing.youtube_double.state import DoubleState
from influencer_stats.testing.youtube_double.wire import VIDEOS_PATH


@dataclass(frozen=True, slots=True)
class RunningDouble:
    """A double listening on a real socket."""

    host: str
    port: int
    state: DoubleState

    @property
    def base(self) -> str:
        """``http://host:port`` (for /healthz and /_control/...)."""
        return f"http://{self.host}:{self.port}"

    @property
    def url(self) -> str:
        """The videos.list base URL a client is configured with."""
        return f"{self.base}{VIDEOS_PATH}"


@asynccontextmanager
async def running_double(
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    state: DoubleState | None = None,
    require_key: str | None = None,
    latency_ms: int = 0,
    stall_seconds: float = 30.0,
) -> AsyncIterator[RunningDouble]:
    """Run the double on ``host:port`` (0: a free port) for the ``async with`` body.

    ``stall_seconds`` is the default stall of a fresh state (ignored when
    ``state`` is given). On exit, stalled requests are woken and the server
    is stopped.
    """
    st = state if state is not None else DoubleState(default_stall_seconds=stall_seconds)
    app = create_app(st, require_key=require_key, latency_ms=latency_ms)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        actual_port = port
        for address in runner.addresses:
            if isinstance(address, tuple) and len(address) >= 2:
                actual_port = int(address[1])
                break
        yield RunningDouble(host=host, port=actual_port, state=st)
    finally:
        await runner.cleanup()
