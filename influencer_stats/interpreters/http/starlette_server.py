"""The API on Starlette (served by uvicorn)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Route

from influencer_stats.http import problems
from influencer_stats.http.api import HttpApi, Incoming
from influencer_stats.http.body import content_length, read_bounded
from influencer_stats.http.problems import Reply
from influencer_stats.http.routes import ROUTES
from influencer_stats.http.routes import Route as ApiRoute

OpenApi = Callable[[], AbstractAsyncContextManager[HttpApi]]
_ALL_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"]


def _response(reply: Reply) -> Response:
    response = Response(reply.body, reply.status, media_type=reply.content_type)
    for name, value in reply.headers:
        response.headers[name] = value
    return response


async def _read_body(request: Request, limit: int) -> bytes | None:
    return await read_bounded(request.stream(), limit, content_length(request.headers.get("content-length")))


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
            headers = request.headers
            incoming = Incoming(
                route,
                request.method,
                request.path_params.get("id", ""),
                headers.get("x-request-id"),
                headers.get("authorization"),
                partial(_read_body, request),
            )
            return _response(await current[0].serve(incoming))

        return handle

    # Every standard method reaches HttpApi, which answers 405 itself.
    routes = [Route(template, endpoint(route), methods=_ALL_METHODS) for template, route in ROUTES.items()]

    async def refused(request: Request, exc: Exception) -> Response:
        """Starlette's own 404, and 405 for methods outside _ALL_METHODS (e.g. QUERY)."""
        assert isinstance(exc, HTTPException)
        route = next((r.path for r in routes if r.matches(request.scope)[0] is not Match.NONE), "unmatched")
        if exc.status_code == 405 and route in ROUTES:
            reply = problems.method_not_allowed(request.method, ROUTES[route].methods)
        elif exc.status_code == 404:
            reply = problems.route_not_found(request.url.path)
        else:
            reply = problems.problem(exc.status_code, "http-error", "HTTP error", str(exc.detail))
        return _response(current[0].refuse(reply, route, request.method, request.headers.get("x-request-id")))

    return Starlette(routes=routes, exception_handlers={HTTPException: refused}, lifespan=lifespan)
