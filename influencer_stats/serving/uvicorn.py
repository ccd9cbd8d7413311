"""uvicorn, for the ASGI servers (``starlette``, ``asgi``): in this process or in worker processes.

With several workers (``serving.supervised``: the supervisor of the ``workers`` slice, not
uvicorn's, whose one shared socket gave every keep-alive connection to whichever worker woke
first), each worker binds the port with ``SO_REUSEPORT`` and builds the app and the hardened
protocol from the settings in the environment.
"""

from __future__ import annotations

import logging
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from types import FrameType
from typing import Any, Final

import uvicorn
from uvicorn.config import STARTUP_FAILURE

from influencer_stats.http.routes import HEALTHZ
from influencer_stats.serving.address import CANNOT_LISTEN, announce, claim_the_address
from influencer_stats.serving.environment import settings_from_environment
from influencer_stats.serving.server import AppOf, app_around
from influencer_stats.serving.supervised import Target, Worker, supervise
from influencer_stats.serving.uvicorn_protocol import HardenedHttpToolsProtocol, Limits, protocol_class
from influencer_stats.settings import Settings


def limits(settings: Settings) -> Limits:
    """What one connection may cost; ``/healthz`` answers even over the concurrency limit."""
    return Limits(
        header_timeout_s=settings.header_timeout_s,
        body_timeout_s=settings.body_timeout_s,
        send_timeout_s=settings.send_timeout_s,
        max_header_bytes=settings.max_header_bytes,
        max_headers=settings.max_headers,
        max_pipelined=settings.max_pipelined,
        exempt_paths=frozenset({HEALTHZ}),
    )


class EnvironmentProtocol(HardenedHttpToolsProtocol):
    """The hardened protocol by import path, its limits from the settings in the environment.

    For ``uvicorn main:app --http influencer_stats.serving.uvicorn:EnvironmentProtocol``
    (uvicorn's ``--workers`` too): the settings are resolved as the app's are,
    once per process, at its first connection.
    """

    def __init__(
        self, config: Any, server_state: Any, app_state: dict[str, Any], _loop: Any | None = None
    ) -> None:
        cls = type(self)
        if "limits" not in cls.__dict__:
            cls.limits = limits(settings_from_environment())
        super().__init__(config, server_state, app_state, _loop)


def quiet_logging(settings: Settings) -> None:
    """For ``uvicorn influencer_stats.asgi:app``, whose options the app cannot set: what ``influencer-stats``
    runs uvicorn with.

    No access log (uvicorn skips it when its logger has no handler), none of
    uvicorn's own messages below WARNING, so the service's JSON events are the
    only lines at INFO, and the service's start-up line instead of uvicorn's
    "Uvicorn running on" (with uvicorn's address, whatever ``--log-level``
    says). The ``server`` header is uvicorn's to add before it loads the app:
    ``--no-server-header`` removes it.
    """
    access = logging.getLogger("uvicorn.access")
    access.handlers.clear()
    access.propagate = False
    logging.getLogger("uvicorn").setLevel(
        max(logging.getLogger("uvicorn").getEffectiveLevel(), logging.WARNING)
    )
    error = logging.getLogger("uvicorn.error")
    for added in [f for f in error.filters if isinstance(f, _Announcing)]:  # once, however often it is built
        error.removeFilter(added)
    error.addFilter(_Announcing(settings, max(error.getEffectiveLevel(), logging.WARNING)))
    error.setLevel(min(error.getEffectiveLevel(), logging.INFO))  # the filter sees the "running on" record


def exit_0_on_sigterm() -> None:
    """For ``uvicorn influencer_stats.asgi:app``: SIGTERM ends uvicorn's own runner with 0, as ``_Server`` does.

    uvicorn restores the handlers it found and raises a stopping signal again once
    it has shut down gracefully (143 for SIGTERM). Built before it serves (``app``),
    the handler it will find exits 0; built while it serves (``--factory``, its
    workers), its own handler stops noting SIGTERM.
    """
    current = signal.getsignal(signal.SIGTERM)
    server = getattr(current, "__self__", None)
    if isinstance(server, uvicorn.Server) and callable(current):
        handle = current

        def forget_sigterm(sig: int, frame: FrameType | None) -> None:
            handle(sig, frame)
            if sig == signal.SIGTERM and sig in server._captured_signals:
                server._captured_signals.remove(sig)

        signal.signal(signal.SIGTERM, forget_sigterm)
    elif current == signal.SIG_DFL and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _exit_0)


def _exit_0(sig: int, frame: FrameType | None) -> None:
    raise SystemExit(0)


class _Announcing(logging.Filter):
    """Turns uvicorn's "Uvicorn running on %s://%s:%d" into the start-up line; lets through from ``level`` up."""

    def __init__(self, settings: Settings, level: int) -> None:
        super().__init__()
        self._settings = settings
        self._level = level

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if (
            str(record.msg).startswith("Uvicorn running on %s://")
            and isinstance(args, tuple)
            and len(args) == 3
        ):
            _, host, port = args
            announce(replace(self._settings, host=str(host), port=int(str(port)), workers=1))
            return False
        return record.levelno >= self._level


#: What stops the service gracefully, on every server: SIGTERM, Ctrl-C, and the terminal hanging up.
STOPPING_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class _Server(uvicorn.Server):
    """uvicorn's server, calling ``listening`` once it listens; SIGTERM, SIGINT and SIGHUP end it
    gracefully, with 0."""

    def __init__(self, config: uvicorn.Config, listening: Callable[[], None]) -> None:
        super().__init__(config)
        self._listening = listening

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        # uvicorn captures SIGINT and SIGTERM; SIGHUP killed the process at once (129), no drain.
        with super().capture_signals():
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            previous = signal.signal(signal.SIGHUP, self.handle_exit)
            try:
                yield
            finally:
                signal.signal(signal.SIGHUP, previous)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        if sig in STOPPING_SIGNALS and sig in self._captured_signals:
            # uvicorn raises a stopping signal again once it has shut down: SIGTERM ended the
            # process with 143, and Ctrl-C (SIGINT) with a KeyboardInterrupt traceback and 130. A
            # stop asked for and done gracefully exits 0, as on every other server.
            self._captured_signals.remove(sig)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self._listening()


def _config(settings: Settings, app: Any) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        http=protocol_class(limits(settings)),
        lifespan="on",
        access_log=False,
        log_level="warning",
        server_header=False,
        # Who a client is, is the edge's to say, alike on every server: uvicorn would take the
        # client's address from X-Forwarded-For on connections from 127.0.0.1 (its default).
        proxy_headers=False,
        timeout_keep_alive=int(settings.keepalive_s),
        timeout_graceful_shutdown=int(settings.graceful_shutdown_s),
        limit_concurrency=settings.limit_concurrency,
        backlog=settings.backlog,
    )


def run(settings: Settings, app: AppOf, worker: Target) -> None:
    """Serve ``app`` around the API of ``settings``: JSON logs only (no access log), no ``server`` header, hardened
    httptools; in this process, or in ``settings.workers`` processes each running ``worker`` (a
    module-level function of the server's room that calls ``serve_worker``: spawned processes
    find their target by name)."""
    claim = claim_the_address(settings.host, settings.port)  # a busy port: one line, exit 1
    try:
        if settings.workers == 1:
            server = _Server(_config(settings, app_around(settings, app)), lambda: announce(settings))
            server.run()
            if not server.started:
                raise SystemExit(STARTUP_FAILURE)  # as uvicorn.run: the application failed to start
        else:
            supervise(settings, worker)
    finally:
        if claim is not None:
            claim.close()


def serve_worker(worker: Worker, app: AppOf) -> None:
    """In one of several worker processes: settings from the environment, the port shared."""
    settings = settings_from_environment()
    server = _Server(_config(settings, app_around(settings, app, worker.failed)), worker.listening)
    try:
        sock = worker.bind(settings.host, settings.port)
    except OSError as error:
        if error.errno not in CANNOT_LISTEN:
            raise
        worker.cannot_listen(error)
    server.run(sockets=[sock])  # a terminal's Ctrl-C reaches every worker: each stops gracefully
    if not server.started:
        raise SystemExit(STARTUP_FAILURE)
