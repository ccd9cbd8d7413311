"""The API on Starlette (served by uvicorn)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from influencer_stats.interpreters.http import problems
from influencer_stats.interpreters.http.api import HttpApi
from influencer_stats.interpreters.http.problems import Reply

OpenApi = Callable[[], AbstractAsyncContextManager[HttpApi]]


def _response(reply: Reply) -> Response:
    response = Response(reply.body, reply.status, media_type=reply.content_type)
    for name, value in reply.headers:
        response.headers[name] = value
    return response


async def _read_body(request: Request, limit: int) -> bytes | None:
    """The body, or None once it exceeds ``limit`` (never buffering more)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


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

    async def healthz(_: Request) -> Response:
        return _response(current[0].health())

    async def readyz(_: Request) -> Response:
        return _response(await current[0].ready())

    async def list_collections(_: Request) -> Response:
        return _response(await current[0].list_collections())

    async def collection(request: Request) -> Response:
        api = current[0]
        raw_id: str = request.path_params["id"]
        method = request.method
        if method == "GET" or method == "HEAD":
            return _response(await api.get_collection(raw_id))
        if method == "DELETE":
            return _response(await api.delete_collection(raw_id))
        body = await _read_body(request, api.max_body_bytes)
        if body is None:
            return _response(problems.body_too_large(api.max_body_bytes))
        return _response(await api.put_collection(raw_id, body))

    async def stats(request: Request) -> Response:
        return _response(await current[0].collection_stats(request.path_params["id"]))

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 405:
            allowed = tuple(sorted(a.strip() for a in (exc.headers or {}).get("Allow", "GET").split(",")))
            return _response(problems.method_not_allowed(request.method, allowed))
        if exc.status_code == 404:
            return _response(problems.route_not_found(request.url.path))
        return _response(problems.problem(exc.status_code, "http-error", "HTTP error", str(exc.detail)))

    async def server_error(_: Request, exc: Exception) -> Response:
        if current:
            current[0].log.error("http.unhandled_error", error=repr(exc)[:500])
        return _response(problems.internal_error())

    return Starlette(
        routes=[
            Route("/healthz", healthz, methods=["GET"]),
            Route("/readyz", readyz, methods=["GET"]),
            Route("/collections", list_collections, methods=["GET"]),
            Route("/collections/{id}", collection, methods=["GET", "PUT", "DELETE"]),
            Route("/collections/{id}/stats", stats, methods=["GET"]),
        ],
        exception_handlers={HTTPException: http_error, Exception: server_error},
        lifespan=lifespan,
    )
