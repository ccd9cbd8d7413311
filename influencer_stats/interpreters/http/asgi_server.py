"""The API as a hand-routed ASGI application (served by uvicorn): the talk's v5 move.

No framework between uvicorn and ``HttpApi``: routing is a few string tests,
the response is two ``send`` calls. Behaviour is identical to the other
servers because everything but routing and body reading is ``HttpApi``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import Any

from influencer_stats.interpreters.http import problems
from influencer_stats.interpreters.http.api import HttpApi
from influencer_stats.interpreters.http.problems import Reply

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
OpenApi = Callable[[], AbstractAsyncContextManager[HttpApi]]

_PREFIX = "/collections/"
_READ = ("GET", "HEAD")
_COLLECTION_METHODS = ("DELETE", "GET", "HEAD", "PUT")


class _TooLargeError(Exception):
    pass


async def _read_body(scope: Scope, receive: Receive, limit: int) -> bytes:
    for name, value in scope["headers"]:
        if name == b"content-length" and value.isdigit() and int(value) > limit:
            raise _TooLargeError
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":  # the client went away
            return bytes(body)
        body += message.get("body", b"")
        if len(body) > limit:
            raise _TooLargeError
        if not message.get("more_body", False):
            return bytes(body)


class AsgiApp:
    """An ASGI 3 application: lifespan opens the API once; HTTP is routed by hand."""

    def __init__(self, open_api: OpenApi) -> None:
        self._open_api = open_api
        self._api: HttpApi | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "lifespan":
            await self._lifespan(receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        async with AsyncExitStack() as stack:
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    try:
                        self._api = await stack.enter_async_context(self._open_api())
                    except Exception as exc:  # noqa: BLE001 - reported to the server, which exits
                        await send({"type": "lifespan.startup.failed", "message": repr(exc)})
                        return
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await stack.aclose()
                    self._api = None
                    await send({"type": "lifespan.shutdown.complete"})
                    return

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        api = self._api
        assert api is not None, "lifespan has not started the API"
        method: str = scope["method"]
        path: str = scope["path"]
        try:
            reply = await self._route(api, method, path, scope, receive)
        except _TooLargeError:
            reply = problems.body_too_large(api.max_body_bytes)
        except Exception as exc:  # noqa: BLE001 - the edge is where bugs stop
            api.log.error("http.unhandled_error", error=repr(exc)[:500])
            reply = problems.internal_error()
        headers = [
            (b"content-type", reply.content_type.encode()),
            (b"content-length", str(len(reply.body)).encode()),
        ]
        headers.extend((name.encode(), value.encode()) for name, value in reply.headers)
        await send({"type": "http.response.start", "status": reply.status, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if method == "HEAD" else reply.body})

    async def _route(self, api: HttpApi, method: str, path: str, scope: Scope, receive: Receive) -> Reply:
        if path.startswith(_PREFIX):
            rest = path[len(_PREFIX) :]
            if rest.endswith("/stats") and rest.count("/") == 1 and len(rest) > 6:
                if method not in _READ:
                    return problems.method_not_allowed(method, _READ)
                return await api.collection_stats(rest[:-6])
            if rest and "/" not in rest:
                if method in _READ:
                    return await api.get_collection(rest)
                if method == "PUT":
                    return await api.put_collection(
                        rest, await _read_body(scope, receive, api.max_body_bytes)
                    )
                if method == "DELETE":
                    return await api.delete_collection(rest)
                return problems.method_not_allowed(method, _COLLECTION_METHODS)
        elif path in ("/collections", "/healthz", "/readyz"):
            if method not in _READ:
                return problems.method_not_allowed(method, _READ)
            if path == "/healthz":
                return api.health()
            return await (api.list_collections() if path == "/collections" else api.ready())
        return problems.route_not_found(path)
