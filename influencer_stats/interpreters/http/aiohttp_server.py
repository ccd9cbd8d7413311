"""The API on aiohttp.web."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager

from aiohttp import web

from influencer_stats.interpreters.http import problems
from influencer_stats.interpreters.http.api import HttpApi
from influencer_stats.interpreters.http.problems import Reply

OpenApi = Callable[[], AbstractAsyncContextManager[HttpApi]]
_API: web.AppKey[HttpApi] = web.AppKey("api", HttpApi)


def _response(reply: Reply) -> web.Response:
    response = web.Response(body=reply.body, status=reply.status, content_type=reply.content_type)
    for name, value in reply.headers:
        response.headers[name] = value
    return response


async def _read_body(request: web.Request, limit: int) -> bytes | None:
    """The body, or None once it exceeds ``limit`` (never buffering more)."""
    declared = request.content_length
    if declared is not None and declared > limit:
        return None
    body = bytearray()
    async for chunk in request.content.iter_any():
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


@web.middleware
async def _problems(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """aiohttp's own 404/405/413 and any bug become the shared problem bodies."""
    try:
        return await handler(request)
    except web.HTTPMethodNotAllowed as exc:
        return _response(problems.method_not_allowed(request.method, tuple(sorted(exc.allowed_methods))))
    except web.HTTPNotFound:
        return _response(problems.route_not_found(request.path))
    except web.HTTPRequestEntityTooLarge:
        return _response(problems.body_too_large(HttpApi.max_body_bytes))
    except web.HTTPException as exc:
        return _response(problems.problem(exc.status, "http-error", "HTTP error", exc.reason))
    except Exception as exc:  # noqa: BLE001 - the edge is where bugs stop
        request.app[_API].log.error("http.unhandled_error", error=repr(exc)[:500])
        return _response(problems.internal_error())


async def _healthz(request: web.Request) -> web.Response:
    return _response(request.app[_API].health())


async def _readyz(request: web.Request) -> web.Response:
    return _response(await request.app[_API].ready())


async def _list(request: web.Request) -> web.Response:
    return _response(await request.app[_API].list_collections())


async def _get(request: web.Request) -> web.Response:
    return _response(await request.app[_API].get_collection(request.match_info["id"]))


async def _delete(request: web.Request) -> web.Response:
    return _response(await request.app[_API].delete_collection(request.match_info["id"]))


async def _put(request: web.Request) -> web.Response:
    api = request.app[_API]
    body = await _read_body(request, api.max_body_bytes)
    if body is None:
        return _response(problems.body_too_large(api.max_body_bytes))
    return _response(await api.put_collection(request.match_info["id"], body))


async def _stats(request: web.Request) -> web.Response:
    return _response(await request.app[_API].collection_stats(request.match_info["id"]))


def create_app(open_api: OpenApi) -> web.Application:
    """An aiohttp app whose cleanup context opens the API (and its resources) once."""

    async def lifespan(app: web.Application) -> AsyncIterator[None]:
        async with open_api() as api:
            app[_API] = api
            yield

    # client_max_size above our own limit so _read_body answers 413 itself.
    app = web.Application(middlewares=[_problems], client_max_size=HttpApi.max_body_bytes + 1)
    app.cleanup_ctx.append(lifespan)
    app.router.add_get("/healthz", _healthz, allow_head=True)
    app.router.add_get("/readyz", _readyz, allow_head=True)
    app.router.add_get("/collections", _list, allow_head=True)
    app.router.add_get("/collections/{id}", _get, allow_head=True)
    app.router.add_put("/collections/{id}", _put)
    app.router.add_delete("/collections/{id}", _delete)
    app.router.add_get("/collections/{id}/stats", _stats, allow_head=True)
    return app
