"""The ``starlette`` server: the API on Starlette, served by uvicorn (``serving.uvicorn``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from influencer_stats.bootstrap.edge import ROUTES
from influencer_stats.http import problems
from influencer_stats.http.api import HttpApi
from influencer_stats.http.body import BodyIncomplete, content_length, read_request_body
from influencer_stats.http.incoming import HTTP_METHODS, Incoming
from influencer_stats.http.problems import BODILESS, Reply
from influencer_stats.http.route_table import Route as ApiRoute
from influencer_stats.http.route_table import decode_segment
from influencer_stats.serving import uvicorn
from influencer_stats.serving.server import OpenApi, Server, asgi_lifespan
from influencer_stats.serving.supervised import Worker
from influencer_stats.settings import Settings

#: Every method reaches HttpApi, which answers 405 (with Allow) or 400 itself.
_ALL_METHODS = sorted(HTTP_METHODS)


def _response(reply: Reply) -> Response:
    # A 204 or 304 without Content-Type (Starlette writes no Content-Length for them itself).
    media_type = None if reply.status in BODILESS else reply.content_type
    response = Response(reply.body, reply.status, media_type=media_type)
    for name, value in reply.headers:
        response.headers[name] = value
    return response


async def _read_body(request: Request, limit: int) -> bytes | None:
    try:
        return await read_request_body(
            request.stream(), limit, content_length(request.headers.get("content-length"))
        )
    except ClientDisconnect as exc:
        raise BodyIncomplete("the client disconnected") from exc


class _RawPathRouting:
    """Starlette's router sees the path as received (``raw_path``), as ``ROUTES.match_raw`` routes
    it on the other servers: ``{id}`` then matches ``pl%2Fstats`` whole, and the endpoint decodes
    it (the id ``pl/stats``, refused), never the stats of ``pl``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw_path = scope.get("raw_path")
        if scope["type"] == "http" and raw_path is not None:
            scope["path"] = raw_path.decode("latin-1")
        await self.app(scope, receive, send)


def create_app(open_api: OpenApi) -> Starlette:
    """A Starlette app whose lifespan opens the API (and its resources) once."""
    current: list[HttpApi] = []

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with open_api() as api:
            current.append(api)
            try:
                yield
            finally:
                current.clear()

    def endpoint(route: ApiRoute) -> Callable[[Request], Awaitable[Response]]:
        async def handle(request: Request) -> Response:
            headers, api = request.headers, current[0]
            incoming = Incoming(
                route,
                request.method,
                decode_segment(request.path_params.get("id", "")),
                headers.get("x-request-id"),
                ", ".join(headers.getlist("authorization")) or None,
                partial(_read_body, request),
                query=request.scope["query_string"].decode("latin-1"),
                traceparent=headers.get("traceparent") if api.traced else None,
                content_type=headers.get("content-type"),
                peer=client[0] if (client := request.scope.get("client")) else None,
                forwarded_for=", ".join(headers.getlist("x-forwarded-for")) or None,
                if_none_match=", ".join(headers.getlist("if-none-match")) or None,
                accept_encoding=headers.get("accept-encoding"),
                origin=headers.get("origin") if api.cors else None,
                cors_method=headers.get("access-control-request-method") if api.cors else None,
            )
            return _response(await api.serve(incoming))

        return handle

    routes = [Route(template, endpoint(route), methods=_ALL_METHODS) for template, route in ROUTES.items()]

    async def refused(request: Request, exc: Exception) -> Response:
        """Starlette's own refusals: no route (404), or a method outside HTTP_METHODS (405)."""
        assert isinstance(exc, HTTPException)
        api, method, request_id = current[0], request.method, request.headers.get("x-request-id")
        if exc.status_code in (404, 405):
            return _response(api.unmatched(decode_segment(request.scope["path"]), method, request_id))
        reply = problems.problem(exc.status_code, "http-error", "HTTP error", str(exc.detail))
        return _response(api.refuse(reply, "unmatched", method, request_id))

    app = Starlette(
        routes=routes,
        middleware=[Middleware(_RawPathRouting)],
        exception_handlers={HTTPException: refused},
        lifespan=lifespan,
    )
    # No 307 to the path without its trailing slash (built from the client's Host header):
    # "/collections/" is a 404 problem, as on every other server.
    app.router.redirect_slashes = False
    return app


def _app(open_api: OpenApi, _: Settings) -> Starlette:
    return create_app(open_api)


def _worker(worker: Worker) -> None:
    uvicorn.serve_worker(worker, _app)


def _run(settings: Settings) -> None:
    uvicorn.run(settings, _app, _worker)


SERVER = Server(app=_app, run=_run, lifespan=asgi_lifespan, runner="uvicorn", asgi=True)
