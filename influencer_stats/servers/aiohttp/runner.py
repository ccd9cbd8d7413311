"""aiohttp.web's runner, on uvloop when it is installed: in this process or in worker processes.

With several workers (``serving.supervised``, the ``workers`` slice's supervisor), each binds the port with
``SO_REUSEPORT`` and builds its app from the environment.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable

from aiohttp import web

from influencer_stats.servers.aiohttp.app import app
from influencer_stats.serving.address import CANNOT_LISTEN, announce, cannot_listen, claim_the_address
from influencer_stats.serving.environment import settings_from_environment
from influencer_stats.serving.server import app_around
from influencer_stats.serving.supervised import Worker, supervise
from influencer_stats.settings import Settings


class _BindError(Exception):
    def __init__(self, error: OSError) -> None:
        super().__init__(error)
        self.error = error


def run(settings: Settings) -> None:
    """Serve the API on aiohttp.web in this process, or in ``settings.workers`` processes."""
    claim = claim_the_address(settings.host, settings.port)  # a busy port: one line, exit 1
    try:
        if settings.workers == 1:
            _serve_here(settings)
        else:
            supervise(settings, _worker)
    finally:
        if claim is not None:
            claim.close()


def _serve_here(settings: Settings) -> None:
    _use_uvloop()
    try:
        asyncio.run(_serve(settings, app_around(settings, app), lambda: announce(settings), reuse_port=False))
    except _BindError as failed:
        raise cannot_listen(settings.host, settings.port, failed.error) from None


def _worker(worker: Worker) -> None:
    """One of several worker processes: settings from the environment, the port shared."""
    settings = settings_from_environment()
    _use_uvloop()
    try:
        opened = app_around(settings, app, worker.failed)
        asyncio.run(_serve(settings, opened, worker.listening, reuse_port=True))
    except _BindError as failed:
        worker.cannot_listen(failed.error)


def _use_uvloop() -> None:
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is optional
        pass
    else:
        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())


async def _serve(
    settings: Settings,
    app: web.Application,
    listening: Callable[[], None],
    *,
    reuse_port: bool,
) -> None:
    """Open the API (the app's cleanup context), listen, call ``listening``, serve until SIGTERM, SIGINT or SIGHUP.

    A worker sends itself SIGTERM when its parent is gone (its supervisor's lifeline).
    """
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # SIGHUP: the terminal hung up
        loop.add_signal_handler(sig, stop.set)
    runner = web.AppRunner(
        app,
        handle_signals=False,
        access_log=None,
        shutdown_timeout=settings.graceful_shutdown_s,
        # One aiohttp timer closes a connection whose next request's headers are not
        # complete this long after it opened or answered: both the idle keep-alive
        # and the header timeout, so the smaller of the two.
        keepalive_timeout=min(settings.keepalive_s, settings.header_timeout_s),
        # aiohttp bounds each line (the request line, every header) and their count, not
        # their total: each line at most the total we allow (400 beyond, aiohttp's own text).
        max_line_size=settings.max_header_bytes,
        max_field_size=settings.max_header_bytes,
        max_headers=settings.max_headers,
    )
    await runner.setup()  # runs the cleanup context: the API opens here
    try:
        site = web.TCPSite(
            runner, settings.host, settings.port, backlog=settings.backlog, reuse_port=reuse_port
        )
        try:
            await site.start()
        except OSError as error:
            if error.errno not in CANNOT_LISTEN:
                raise
            raise _BindError(error) from None
        listening()
        await stop.wait()
    finally:
        await runner.cleanup()
