"""The ``asgi`` server: the API as a hand-routed ASGI application, served by uvicorn: the talk's v5 move.

No framework between uvicorn and ``HttpApi``: routing is ``ROUTES.match_raw`` on
the path as received (a dict lookup, then a few string tests), the response is two ``send`` calls.
Behaviour is identical to the other servers because everything but turning
ASGI messages into body chunks is ``HttpApi`` and the route table.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import AsyncExitStack
from functools import partial
from typing import Any

from influencer_stats.bootstrap.edge import ROUTES
from influencer_stats.http.api import HttpApi
from influencer_stats.http.body import BodyIncomplete, content_length, read_request_body
from influencer_stats.http.incoming import Incoming
from influencer_stats.http.problems import BODILESS
from influencer_stats.serving import uvicorn
from influencer_stats.serving.server import OpenApi, Server, asgi_lifespan
from influencer_stats.serving.supervised import Worker
from influencer_stats.settings import Settings

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


async def _chunks(receive: Receive) -> AsyncIterator[bytes]:
    """The body's chunks from ``http.request`` messages; ``BodyIncomplete`` if the client goes away."""
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise BodyIncomplete("the client disconnected")  # http.disconnect before the last chunk
        yield message.get("body", b"")
        if not message.get("more_body", False):
            return


async def _read_body(scope: Scope, receive: Receive, limit: int) -> bytes | None:
    declared = next((value for name, value in scope["headers"] if name == b"content-length"), None)
    return await read_request_body(_chunks(receive), limit, content_length(declared))


def _header(scope: Scope, name: bytes) -> str | None:
    return next((value.decode("latin-1") for key, value in scope["headers"] if key == name), None)


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
        request_id = authorization = content_type = forwarded_for = if_none_match = accept_encoding = None
        for name, value in scope["headers"]:
            if name == b"x-request-id":
                if request_id is None:  # the first, as the other servers take it
                    request_id = value.decode("latin-1")
            elif name == b"authorization":
                # Every line, joined (see Incoming.authorization): two never authorize a write.
                text = value.decode("latin-1")
                authorization = text if authorization is None else f"{authorization}, {text}"
            elif name == b"content-type" and content_type is None:
                content_type = value.decode("latin-1")
            elif name == b"x-forwarded-for":  # every line, joined (Incoming.forwarded_for)
                text = value.decode("latin-1")
                forwarded_for = text if forwarded_for is None else f"{forwarded_for}, {text}"
            elif name == b"if-none-match":  # every line, joined (Incoming.if_none_match)
                text = value.decode("latin-1")
                if_none_match = text if if_none_match is None else f"{if_none_match}, {text}"
            elif name == b"accept-encoding" and accept_encoding is None:
                accept_encoding = value.decode("latin-1")
        # Routed as received (ROUTES.match_raw): %2F inside an id stays in it.
        raw_path: bytes | None = scope.get("raw_path")
        if raw_path is None:  # an ASGI server without raw_path (uvicorn always sends it)
            route, collection_id = ROUTES.match(scope["path"])
        else:
            route, collection_id = ROUTES.match_raw(raw_path)
        if route is not None:
            reply, answered_id = await api.answer(
                Incoming(
                    route,
                    method,
                    collection_id,
                    request_id,
                    authorization,
                    partial(_read_body, scope, receive),
                    query=scope["query_string"].decode("latin-1"),
                    traceparent=_header(scope, b"traceparent") if api.traced else None,
                    content_type=content_type,
                    peer=client[0] if (client := scope.get("client")) else None,
                    forwarded_for=forwarded_for,
                    if_none_match=if_none_match,
                    accept_encoding=accept_encoding,
                    origin=_header(scope, b"origin") if api.cors else None,
                    cors_method=_header(scope, b"access-control-request-method") if api.cors else None,
                )
            )
        else:
            reply = api.unmatched(scope["path"], method, request_id)
            answered_id = None  # in reply.headers already
        headers = (
            []  # a 204 or 304: no content, so neither header of it
            if reply.status in BODILESS
            else [
                (b"content-type", reply.content_type.encode()),
                (b"content-length", str(len(reply.body)).encode()),
            ]
        )
        headers.extend((name.encode(), value.encode()) for name, value in reply.headers)
        if answered_id is not None:
            headers.append((b"x-request-id", answered_id.encode()))
        await send({"type": "http.response.start", "status": reply.status, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if method == "HEAD" else reply.body})


def _app(open_api: OpenApi, _: Settings) -> AsgiApp:
    return AsgiApp(open_api)


def _worker(worker: Worker) -> None:
    uvicorn.serve_worker(worker, _app)


def _run(settings: Settings) -> None:
    uvicorn.run(settings, _app, _worker)


SERVER = Server(app=_app, run=_run, lifespan=asgi_lifespan, runner="uvicorn", asgi=True)
