"""What a server is to the service: how it builds the app around the API, and how it runs it.

Each server is one room, ``influencer_stats.servers.<name>``, holding its
adapter (its framework's app, around ``HttpApi``), its runner and one
``SERVER`` record of this type; ``bootstrap.servers`` names its module.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

from influencer_stats.bootstrap.root import open_http_api
from influencer_stats.http.api import HttpApi
from influencer_stats.settings import Settings

#: Opens the API (and every resource it holds) for a server's lifespan: ``bootstrap.root.open_http_api``.
OpenApi = Callable[[], AbstractAsyncContextManager[HttpApi]]
#: Builds a server's framework app around an opener of the API (``Server.app``).
AppOf = Callable[[OpenApi, Settings], Any]


@dataclass(frozen=True, slots=True)
class Server:
    """A server: its app around the API of some settings, its runner, whether it speaks ASGI.

    ``app(open_api, settings)`` builds the framework's application, which
    calls ``open_api`` in its lifespan; ``run(settings)`` serves until
    SIGTERM/SIGINT, in this process or in ``settings.workers`` worker
    processes; an ASGI app can also be served by ``uvicorn main:app``.
    """

    app: AppOf
    run: Callable[[Settings], None]
    asgi: bool = False


def app_around(settings: Settings, app: AppOf) -> Any:
    """``app`` around the API of ``settings``: the composition root opens it in the app's lifespan."""
    return app(lambda: open_http_api(settings), settings)
