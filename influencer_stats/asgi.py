"""``uvicorn influencer_stats.asgi:app``: the service as an ASGI application, for installed users.

The settings come from the environment, as ``influencer-stats`` reads them
(``INFLUENCER_STATS_*``, ``YOUTUBE_API_KEY`` …; uvicorn's ``--env-file`` loads
a file into it); uvicorn's flags decide the address, the workers and the
reloader. ``INFLUENCER_STATS_SERVER`` must name an ASGI server (``starlette``,
the default, or ``asgi``): another exits 2 saying which to choose. The app is
built on first access of ``app``, or by ``create_app()`` for ``uvicorn --factory
influencer_stats.asgi:create_app``.

As with ``influencer-stats``: one start-up line once uvicorn listens (with
uvicorn's address and, under ``--workers N``, its N; uvicorn's supervisors
still log their own "running on" line at INFO), no access log, uvicorn's own
messages only from WARNING up, and a refused setting prints one line and exits
2 (a folder or database the settings name that cannot be used: 1), under uvicorn's ``--workers`` too; under
``--reload`` the reloader stops, and exits 0 (both with the ``workers`` slice, which
``bootstrap.supervision`` names: without it each of uvicorn's children is on its own, and
says its lines itself). SIGTERM ends it with 0. With ``--no-server-header`` the headers are
those of ``influencer-stats``; with ``--http
influencer_stats.serving.uvicorn:EnvironmentProtocol`` its connection limits.
"""

from __future__ import annotations

import os
import sys
from importlib import import_module
from types import ModuleType
from typing import Any, NoReturn

from influencer_stats.bootstrap.startup import StartupError
from influencer_stats.config.resolve import ConfigError, resolve
from influencer_stats.config.unknown import warn_unknown_variables

PROG = "influencer_stats.asgi"


def _children() -> ModuleType | None:
    """What makes uvicorn's children say things once (``says_why``, ``warns``, ``announce_once``,
    ``end_the_supervisor``), when a slice installed it (``bootstrap.supervision``)."""
    from influencer_stats.bootstrap.supervision import SUPERVISION

    module = SUPERVISION.uvicorn_children
    return None if module is None else import_module(module)


def _tell(prog: str, message: str, code: int) -> None:
    children = _children()
    if children is None or children.says_why():  # once, not once per uvicorn worker
        print(f"{prog}: error: {message}", file=sys.stderr, flush=True)
    if children is not None:
        children.end_the_supervisor(code)


def _refuse(prog: str, message: str) -> NoReturn:
    _tell(prog, message, 2)
    raise SystemExit(2)


def create_app(prog: str = PROG) -> Any:
    """The chosen ASGI server's app around the API of the settings in the environment; exits 2 on a refusal."""
    from influencer_stats.bootstrap.slots import SLOTS
    from influencer_stats.servers import server as server_named
    from influencer_stats.serving.server import app_around
    from influencer_stats.serving.uvicorn import exit_0_on_sigterm, quiet_logging

    children = _children()
    if children is None or children.warns():  # once, not once per uvicorn worker
        warn_unknown_variables(os.environ)
    try:
        settings = resolve(os.environ)
    except ConfigError as error:
        _refuse(prog, str(error))
    server = settings.choices.one("server")
    chosen = server_named(server)
    if not chosen.asgi:
        asgi = " or ".join(entry.name for entry in SLOTS["server"].registry if server_named(entry.name).asgi)
        _refuse(
            prog,
            f"server {server!r} is not an ASGI application; "
            f"set INFLUENCER_STATS_SERVER to {asgi}, or run influencer-stats",
        )
    quiet_logging(settings)  # one process: the start-up line once uvicorn listens
    if children is not None:
        children.announce_once(settings)  # uvicorn's --workers or --reload: its first child, once it listens
    exit_0_on_sigterm()

    def failed(failure: StartupError) -> NoReturn:  # the API cannot open: said as a refused setting
        _tell(prog, str(failure), failure.code)
        os._exit(failure.code)  # in uvicorn's lifespan, where a SystemExit is reported as a crash

    return app_around(settings, chosen.app, failed)


def __getattr__(name: str) -> Any:
    """``app``, built on first access, not at import (uvicorn looks it up twice: built once)."""
    if name != "app":
        raise AttributeError(name)
    app = globals()["app"] = create_app()
    return app
