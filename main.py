"""Run influencer-stats: ``python main.py [--profile NAME] [--port P] [--workers N] [--<slot> NAME]``.

``python main.py --help`` lists every flag and setting. ``uvicorn main:app``
works too for the ASGI servers, reading the settings from the environment; the
app turns uvicorn's access log off and its own messages down to warnings, but
the ``server`` header and the supervisor's lines (``--workers``) are uvicorn's:
with ``uvicorn main:app --no-server-header --log-level warning`` the headers and
logs are those of ``python main.py``. Its connection limits apply with ``--http
influencer_stats.serving.uvicorn:EnvironmentProtocol``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

from influencer_stats.__main__ import run
from influencer_stats.config.resolve import ConfigError


def main(argv: Sequence[str] | None = None) -> int:
    """What ``influencer-stats`` and ``python -m influencer_stats`` do, named ``main.py``."""
    return run(argv, prog="main.py")


def __getattr__(name: str) -> Any:
    """``main:app`` for ``uvicorn main:app``, built on first access, not at import."""
    if name != "app":
        raise AttributeError(name)
    from influencer_stats.bootstrap.servers import SERVERS
    from influencer_stats.config.resolve import resolve
    from influencer_stats.servers import server as server_named
    from influencer_stats.serving.server import app_around
    from influencer_stats.serving.uvicorn import quiet_logging

    try:
        settings = resolve(os.environ)
    except ConfigError as error:
        print(f"main:app: error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    server = settings.choices.one("server")
    chosen = server_named(server)
    if not chosen.asgi:
        asgi = ", ".join(entry.name for entry in SERVERS if server_named(entry.name).asgi)
        print(
            f"main:app: error: server {server!r} is not an ASGI application; "
            f"set INFLUENCER_STATS_SERVER to one of {asgi} or run python main.py",
            file=sys.stderr,
        )
        raise SystemExit(2)
    quiet_logging()
    app = globals()["app"] = app_around(settings, chosen.app)  # uvicorn looks it up twice: build it once
    return app


if __name__ == "__main__":
    sys.exit(main())
