"""Granian (RSGI): its workers are processes that import the app by name.

So the resolved choices travel through the environment: ``run`` exports the
profile and every slot, and each worker's factory resolves the same settings.
"""

from __future__ import annotations

import os
import resource
from typing import Any

from influencer_stats.config.settings import Settings
from influencer_stats.serving.address import announce, claim_the_address

#: hyper's smallest read buffer (it refuses anything below 8 KiB).
_MIN_BUFFER_BYTES = 8192
#: Descriptors a worker keeps for itself (listener, logs, pipes, the store) besides its client pools.
_RESERVED_FDS = 256


def run(settings: Settings) -> None:
    from granian import Granian
    from granian.constants import HTTPModes, Interfaces, Loops, TaskImpl
    from granian.http import HTTP1Settings
    from granian.log import LogLevels

    from influencer_stats.bootstrap.slots import SLOTS
    from influencer_stats.config.settings import declared

    claim = claim_the_address(settings.host, settings.port)  # Granian binds with SO_REUSEPORT
    os.environ[declared()["profile"].env] = settings.profile
    for slot in SLOTS.values():
        os.environ[slot.env] = settings.choices.text(slot.name)
    server = Granian(
        "influencer_stats.serving.granian:app_from_environment",
        factory=True,
        address=settings.host,
        port=settings.port,
        interface=Interfaces.RSGI,
        workers=1,
        loop=Loops.auto,
        task_impl=TaskImpl(settings.granian_tasks),
        # HTTP/1.1 only: with "auto", a connection that sends nothing waits forever to be
        # told HTTP/1 from HTTP/2 (the version sniff has no timeout); this way hyper's
        # header timer runs from the first moment.
        http=HTTPModes.http1,
        http1_settings=HTTP1Settings(
            # One hyper timer bounds both the idle time after an answer and the time to
            # receive the next request's headers (a new connection's too): the smaller bound.
            header_read_timeout=max(1, round(1000 * min(settings.keepalive_s, settings.header_timeout_s))),
            keep_alive=True,
            # The read buffer bounds the request line and headers (431 beyond).
            max_buffer_size=max(_MIN_BUFFER_BYTES, settings.max_header_bytes),
        ),
        backpressure=connection_limit(settings),
        websockets=False,
        backlog=settings.backlog,
        log_level=LogLevels.warning,
        log_access=False,
        workers_kill_timeout=int(settings.graceful_shutdown_s),
    )
    server.on_startup(lambda: announce(settings))  # runs once the shared socket is bound
    server.serve()
    if claim is not None:
        claim.close()


def connection_limit(settings: Settings) -> int:
    """Connections one worker serves at once (Granian's ``backpressure``; more wait to be accepted).

    As many as its open-file limit leaves room for, less what the worker needs for
    itself: the timeouts end slow and idle connections, and a lower cap would let a
    few thousand of them (at most ``INFLUENCER_STATS_BODY_TIMEOUT`` each) shut
    everyone else out, ``/healthz`` included. Below the limit, not at it: at the
    limit ``accept`` fails and Granian retries at once, spinning.
    """
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    files = 1 << 20 if soft == resource.RLIM_INFINITY else soft
    reserved = _RESERVED_FDS + settings.upstream_connections + settings.redis_connections
    return max(1, files - reserved)


def app_from_environment() -> Any:
    """Granian's factory, called in each worker process: settings from the environment."""
    from influencer_stats.config.resolve import resolve
    from influencer_stats.serving import app_for

    return app_for(resolve(os.environ))
