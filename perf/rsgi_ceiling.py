"""The RSGI ceiling: the fastest Granian answers with the service's settings and no service behind it.

A raw RSGI application that answers every GET with :data:`perf.ceiling.BODY` (the
original collection's stats answer, byte for byte), served by Granian built with
the arguments the granian server's runner (``servers/granian/runner.py``) passes: RSGI, the ``auto``
loop (uvloop when installed), the service's task implementation, HTTP/1 only with
its header timeout, keep-alive and read buffer, its backpressure and backlog, no
websockets, warnings only, no access log. The lab passes the values the service
runs with (:func:`perf.profiles.granian_flags`); the defaults here are the
service's defaults. It is the floor of every Granian profile::

    python -m perf.rsgi_ceiling --port 8091
    python -m perf.rsgi_ceiling --port 8093 --work-us 10   # plus 10 µs of Python per request

``--work-us`` answers the same after spinning that long in Python, holding the
GIL as an app's own code does: beside the plain ceiling it shows what each µs of
app time costs a Granian server in req/s. :func:`serve` is shared with :mod:`perf.minimal`, so both references run on
exactly the same server.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from perf.ceiling import BODY

if TYPE_CHECKING:
    from granian._granian import RSGIHTTPProtocol as HTTPProtocol
    from granian.rsgi import Scope

#: The service's reserve of descriptors (``servers.granian.runner._RESERVED_FDS``) plus its default
#: YouTube and Redis pools: what its backpressure leaves out of the open-file limit.
_RESERVED_FDS: Final = 256 + 64 + 64
_OK_HEADERS: Final = [("content-type", "application/json")]
_NOT_ALLOWED_HEADERS: Final = [("allow", "GET")]
_WORK_ENV: Final = "PERF_CEILING_WORK_US"  # --work-us, for the worker processes that import this
_WORK_S: Final = float(os.environ.get(_WORK_ENV, "0")) / 1e6


def default_backpressure() -> int:
    """What the service's ``connection_limit`` gives with its default pools."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    files = 1 << 20 if soft == resource.RLIM_INFINITY else soft
    return max(1, files - _RESERVED_FDS)


@dataclass(frozen=True, slots=True)
class GranianOptions:
    """The service's Granian settings that vary with its own (``Settings``): its defaults here."""

    workers: int = 1
    task_impl: str = "asyncio"
    header_read_timeout_ms: int = 5000
    max_buffer_size: int = 16384
    backpressure: int = field(default_factory=default_backpressure)
    backlog: int = 2048
    workers_kill_timeout: int = 10


def add_granian_arguments(parser: argparse.ArgumentParser) -> None:
    """``--workers``, ``--task-impl``, ... with the service's defaults."""
    defaults = GranianOptions()
    for name in GranianOptions.__dataclass_fields__:
        value = getattr(defaults, name)
        parser.add_argument("--" + name.replace("_", "-"), type=type(value), default=value)


def granian_options(args: argparse.Namespace) -> GranianOptions:
    return GranianOptions(**{name: getattr(args, name) for name in GranianOptions.__dataclass_fields__})


def granian_kwargs(options: GranianOptions) -> dict[str, Any]:
    """``Granian(target, address=..., port=..., **these)``: the service's arguments, bar its app factory."""
    from granian.constants import HTTPModes, Interfaces, Loops, TaskImpl
    from granian.http import HTTP1Settings
    from granian.log import LogLevels

    return {
        "interface": Interfaces.RSGI,
        "workers": options.workers,
        "loop": Loops.auto,
        "task_impl": TaskImpl(options.task_impl),
        "http": HTTPModes.http1,
        "http1_settings": HTTP1Settings(
            header_read_timeout=options.header_read_timeout_ms,
            keep_alive=True,
            max_buffer_size=options.max_buffer_size,
        ),
        "backpressure": options.backpressure,
        "websockets": False,
        "backlog": options.backlog,
        "log_level": LogLevels.warning,
        "log_access": False,
        "workers_kill_timeout": options.workers_kill_timeout,
    }


def serve(target: str, host: str, port: int, options: GranianOptions) -> None:
    """Serve the RSGI app ``module:name`` until SIGTERM (its workers import it by name)."""
    from granian import Granian

    Granian(target, address=host, port=port, **granian_kwargs(options)).serve()


async def app(scope: Scope, proto: HTTPProtocol) -> None:
    """200 and :data:`~perf.ceiling.BODY` for any GET, 405 otherwise."""
    if scope.proto != "http":
        return
    if scope.method == "GET":
        proto.response_bytes(200, _OK_HEADERS, BODY)
    else:
        proto.response_bytes(405, _NOT_ALLOWED_HEADERS, b"")


async def busy_app(scope: Scope, proto: HTTPProtocol) -> None:
    """:func:`app` after ``--work-us`` µs of Python work (a busy loop on the clock)."""
    end = time.perf_counter() + _WORK_S
    while time.perf_counter() < end:
        pass
    await app(scope, proto)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m perf.rsgi_ceiling", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8091)
    parser.add_argument("--work-us", type=float, default=0.0, help="µs of Python work before each answer")
    add_granian_arguments(parser)
    args = parser.parse_args(argv)
    if args.work_us < 0:
        parser.error("--work-us must be 0 or more")
    os.environ[_WORK_ENV] = repr(args.work_us)
    target = "perf.rsgi_ceiling:busy_app" if args.work_us else "perf.rsgi_ceiling:app"
    serve(target, args.host, args.port, granian_options(args))


if __name__ == "__main__":
    main()
