"""The API on aiohttp.web."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from functools import partial

from aiohttp import web

from influencer_stats.http import problems
from influencer_stats.http.api import HttpApi, Incoming
from influencer_stats.http.body import read_bounded
from influencer_stats.http.problems import Reply
from influencer_stats.http.routes import ROUTES, Route

OpenApi = Callable[[], AbstractAsyncContextManager[HttpApi]]
_API: web.AppKey[HttpApi] = web.AppKey("api", HttpApi)


def _response(reply: Reply) -> web.Response:
    # Content-Type as a header: aiohttp's content_type= refuses parameters (charset).
    response = web.Response(
        body=reply.body, status=reply.status, headers={"Content-Type": reply.content_type}
    )
    for name, value in reply.headers:
        response.headers[name] = value
    return response


async def _read_body(request: web.Request, limit: int) -> bytes | None:
    return await read_bounded(request.content.iter_any(), limit, request.content_length)


def _endpoint(route: Route) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handle(request: web.Request) -> web.Response:
        headers = request.headers
        incoming = Incoming(
            route,
            request.method,
            request.match_info.get("id", ""),
            headers.get("x-request-id"),
            headers.get("authorization"),
            partial(_read_body, request),
        )
        return _response(await request.app[_API].serve(incoming))

    return handle


@web.middleware
async def _unmatched(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """aiohttp's own refusals (no route, body too large) become the shared problems."""
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status == 404:
            reply = problems.route_not_found(request.path)
        elif exc.status == 413:
            reply = problems.body_too_large(HttpApi.max_body_bytes)
        else:
            reply = problems.problem(exc.status, "http-error", "HTTP error", exc.reason)
        api = request.app[_API]
        return _response(api.refuse(reply, "unmatched", request.method, request.headers.get("x-request-id")))


def create_app(open_api: OpenApi) -> web.Application:
    """An aiohttp app whose cleanup context opens the API (and its resources) once."""

    async def lifespan(app: web.Application) -> AsyncIterator[None]:
        async with open_api() as api:
            app[_API] = api
            yield

    # client_max_size above our own limit so _read_body answers 413 itself.
    app = web.Application(middlewares=[_unmatched], client_max_size=HttpApi.max_body_bytes + 1)
    app.cleanup_ctx.append(lifespan)
    for template, route in ROUTES.items():
        # "*": every method reaches HttpApi, which answers 405 itself.
        app.router.add_route("*", template, _endpoint(route))
    return app
