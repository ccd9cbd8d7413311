"""What a server is to the service: how it builds the app around the API, and how it runs it.

Each server is one room, ``influencer_stats.servers.<name>``, holding its
adapter (its framework's app, around ``HttpApi``), its runner and one
``SERVER`` record of this type; ``bootstrap.servers`` names its module.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import (
    AbstractAsyncContextManager,
    AbstractContextManager,
    AsyncExitStack,
    asynccontextmanager,
    contextmanager,
)
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
#: Runs an app's lifespan on a loop that is not running, as its server does: open on enter, closed on exit.
Lifespan = Callable[[Any, asyncio.AbstractEventLoop], AbstractContextManager[None]]


@dataclass(frozen=True, slots=True)
class Server:
    """A server: its app around the API of some settings, its runner, and what it does at the edge.

    ``app(open_api, settings)`` builds the framework's application, which
    calls ``open_api`` in its lifespan; ``run(settings)`` serves until
    SIGTERM/SIGINT, in this process or in ``settings.workers`` worker
    processes; an ASGI app can also be served by ``uvicorn main:app``.

    What it declares besides, read by shared code and tests (never its name):

    - ``lifespan``: how its server opens and closes the app (``asgi_lifespan`` for an ASGI app);
      ``test_registry`` opens and closes every server's app with it.
    - ``runner``: what serves the app (``"uvicorn"``, shared by the ASGI servers, or the
      server's own); the uvicorn suite (``test_hardening_uvicorn``) attacks the servers whose
      runner is uvicorn, ``test_hardening_servers`` the others, and the worker tests kill one
      server of each runner; the perf lab picks a server's reference by it.
    - ``raw_path``: the app routes the path as received (``%2F`` stays inside an id); False when
      the server hands over only the decoded path (``test_raw_paths``, docs/api.md "Rules").
    - ``too_large_headers``: the status of its refusal of a head beyond ``max_header_bytes``;
      ``too_many_headers``: of one with more than ``max_headers`` fields, or None when it
      applies no count of its own (``test_hardening_servers``).
    """

    app: AppOf
    run: Callable[[Settings], None]
    lifespan: Lifespan
    runner: str
    asgi: bool = False
    raw_path: bool = True
    too_large_headers: int = 431
    too_many_headers: int | None = 431


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


@contextmanager
def asgi_lifespan(app: Any, loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """An ASGI app's lifespan as uvicorn runs it: startup on enter, shutdown on exit (``Server.lifespan``)."""
    inbox: asyncio.Queue[dict[str, str]] = asyncio.Queue()
    sent: list[str] = []
    answered = asyncio.Event()

    async def send(message: dict[str, str]) -> None:
        sent.append(message["type"])
        answered.set()

    async def answer_to(message: str) -> None:
        answered.clear()
        inbox.put_nowait({"type": message})
        await answered.wait()

    def until_answered(message: str) -> None:  # or the app has returned; bounded either way
        waiter = loop.create_task(answer_to(message))
        loop.run_until_complete(
            asyncio.wait([running, waiter], timeout=60, return_when=asyncio.FIRST_COMPLETED)
        )
        waiter.cancel()
        loop.run_until_complete(asyncio.gather(waiter, return_exceptions=True))

    scope = {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}
    running = loop.create_task(app(scope, inbox.get, send))
    try:
        until_answered("lifespan.startup")
        if sent != ["lifespan.startup.complete"]:
            raise RuntimeError(f"the app's lifespan did not start: {sent}")
        yield
        until_answered("lifespan.shutdown")
        if sent != ["lifespan.startup.complete", "lifespan.shutdown.complete"]:
            raise RuntimeError(f"the app's lifespan did not end: {sent}")
    finally:
        running.cancel()  # a no-op once it has returned
        loop.run_until_complete(asyncio.gather(running, return_exceptions=True))
