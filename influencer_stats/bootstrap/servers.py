"""The ``server`` slot: which HTTP server runs the API, and how.

An entry gives the framework application around the API (built from a
factory that opens the API in the server's lifespan) and the runner that
serves it, in this process or in ``settings.workers`` worker processes that
each build the application from the environment; runners live in
``influencer_stats.serving``.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from influencer_stats.bootstrap.registry import Registry
from influencer_stats.http.api import HttpApi

if TYPE_CHECKING:
    from influencer_stats.settings import Settings

OpenApi = Callable[[], AbstractAsyncContextManager[HttpApi]]


@dataclass(frozen=True, slots=True)
class Server:
    """How to run the API on one server: its application and its runner."""

    app: Callable[[OpenApi, Settings], Any]
    run: Callable[[Settings], None]
    asgi: bool = False


SERVERS: Registry[Server] = Registry("server")


def _starlette_app(open_api: OpenApi, _: Settings) -> Any:
    from influencer_stats.interpreters.http.starlette_server import create_app

    return create_app(open_api)


def _asgi_app(open_api: OpenApi, _: Settings) -> Any:
    from influencer_stats.interpreters.http.asgi_server import AsgiApp

    return AsgiApp(open_api)


def _aiohttp_app(open_api: OpenApi, settings: Settings) -> Any:
    from influencer_stats.interpreters.http.aiohttp_server import create_app

    return create_app(open_api, body_timeout_s=settings.body_timeout_s)  # aiohttp has no body timeout


def _rsgi_app(open_api: OpenApi, settings: Settings) -> Any:
    from influencer_stats.interpreters.http.rsgi_server import RsgiApp

    return RsgiApp(open_api, body_timeout_s=settings.body_timeout_s)  # Granian has no body timeout


def _uvicorn(settings: Settings) -> None:
    from influencer_stats.serving.uvicorn import run

    run(settings)


def _aiohttp(settings: Settings) -> None:
    from influencer_stats.serving.aiohttp import run

    run(settings)


def _granian(settings: Settings) -> None:
    from influencer_stats.serving.granian import run

    run(settings)  # each Granian worker builds its own app, even with one (see serving.granian)


SERVERS.register("starlette", Server(_starlette_app, _uvicorn, asgi=True), "Starlette on uvicorn")
SERVERS.register("aiohttp", Server(_aiohttp_app, _aiohttp), "aiohttp.web")
SERVERS.register("asgi", Server(_asgi_app, _uvicorn, asgi=True), "hand-routed ASGI on uvicorn")
SERVERS.register("granian", Server(_rsgi_app, _granian), "Granian, a Rust HTTP server, through RSGI")
