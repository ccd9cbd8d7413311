"""What a server is to the service: how it builds the app around the API, and how it runs it.

Each server is one room, ``influencer_stats.servers.<name>``, holding its
adapter (its framework's app, around ``HttpApi``), its runner and one
``SERVER`` record of this type; ``bootstrap.servers`` names its module.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any, NoReturn

from influencer_stats.bootstrap.root import open_http_api
from influencer_stats.bootstrap.startup import StartupError
from influencer_stats.http.api import HttpApi
from influencer_stats.serving.address import exit_saying
from influencer_stats.settings import Settings

#: Opens the API (and every resource it holds) for a server's lifespan: ``bootstrap.root.open_http_api``.
OpenApi = Callable[[], AbstractAsyncContextManager[HttpApi]]
#: Builds a server's framework app around an opener of the API (``Server.app``).
AppOf = Callable[[OpenApi, Settings], Any]
#: Ends the process when the API cannot open (``app_around``): says why, once, exits with its code.
Failed = Callable[[StartupError], NoReturn]


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


def app_around(settings: Settings, app: AppOf, failed: Failed | None = None) -> Any:
    """``app`` around the API of ``settings``: the composition root opens it in the app's lifespan.

    A ``StartupError`` while it opens (what it opened is closed by then) goes to ``failed``,
    which ends the process: by default ``exit_saying``; a worker tells its supervisor instead.
    The servers' own reports of a failed lifespan (uvicorn's, with the traceback) never run.
    """

    @asynccontextmanager
    async def opened() -> AsyncIterator[HttpApi]:
        async with AsyncExitStack() as stack:
            try:
                api = await stack.enter_async_context(open_http_api(settings))
            except StartupError as failure:
                (failed or exit_saying)(failure)
            yield api

    return app(opened, settings)
