"""The ``granian`` server's adapter: the API through Granian's RSGI interface (the talk's v5 move).

Granian parses HTTP and manages connections in Rust; Python sees one call per
request with the parsed scope and answers with one ``response_bytes``. Routing
is ``ROUTES.match``; everything else is ``HttpApi``.

Unlike the other servers, it routes the percent-decoded path: an RSGI scope
holds no other (Granian 2.8 decodes ``path``, ``%2F`` included, and RSGI 1.2
has no raw path), so ``/collections/pl%2Fstats`` is the stats of ``pl`` here
(docs/api.md, "Rules").
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, contextmanager
from functools import partial
from typing import Any

from influencer_stats.bootstrap.edge import ROUTES
from influencer_stats.http import problems
from influencer_stats.http.api import HttpApi
from influencer_stats.http.body import BodyIncomplete, BodyTimeout, content_length, read_request_body
from influencer_stats.http.incoming import Incoming, no_body
from influencer_stats.http.problems import BODILESS
from influencer_stats.serving.server import OpenApi
from influencer_stats.settings import Settings

_BODILESS = frozenset({"GET", "HEAD"})


async def _chunks(proto: Any) -> AsyncIterator[bytes]:
    """The body's chunks from the protocol object; ``BodyIncomplete`` if the body did not end whole.

    Granian 2.8 yields each data frame of the body, then one empty chunk as it
    ends (``RSGIHTTPProtocol.__anext__``, src/rsgi/io.rs). Any other frame comes
    as an empty chunk too, then the end's: the error of a body cut short (the
    client went away before a chunked body's last chunk, or short of its
    Content-Length) and, indistinguishably, trailers (which no client of this
    API sends). So an empty chunk that anything follows means the body did not
    end as it should: refused, never stored. (Before, a cut-short chunked body
    whose prefix was valid JSON was stored.)
    """
    ended = False
    async for chunk in proto:
        if ended:
            raise BodyIncomplete("the body ended in an error (cut short) or trailers")
        if chunk:
            yield chunk
        else:
            ended = True


async def _read_body(proto: Any, declared: str | None, timeout_s: float, limit: int) -> bytes | None:
    # Granian has no body timeout of its own. The read runs as a task because asyncio.timeout
    # cannot cancel a coroutine that Granian's "rust" task implementation drives.
    read = asyncio.ensure_future(read_request_body(_chunks(proto), limit, content_length(declared)))
    try:
        done, _ = await asyncio.wait((read,), timeout=timeout_s)
    finally:
        read.cancel()  # a no-op once it is done
    if not done:
        raise BodyTimeout
    return read.result()


@contextmanager
def lifespan(app: RsgiApp, loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """The app's init and del as each Granian worker calls them (``Server.lifespan``)."""
    app.__rsgi_init__(loop)
    try:
        yield
    finally:
        app.__rsgi_del__(loop)


class RsgiApp:
    """An RSGI application. Granian calls ``__rsgi_init__`` in each worker before
    its loop runs (the API and its resources open there) and ``__rsgi_del__``
    after it stops (they close)."""

    def __init__(self, open_api: OpenApi, *, body_timeout_s: float) -> None:
        self._open_api = open_api
        self._stack = AsyncExitStack()
        self._api: HttpApi | None = None
        self._body_timeout_s = body_timeout_s

    def __rsgi_init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._api = loop.run_until_complete(self._stack.enter_async_context(self._open_api()))

    def __rsgi_del__(self, loop: asyncio.AbstractEventLoop) -> None:
        loop.run_until_complete(self._stack.aclose())
        self._api = None

    async def __rsgi__(self, scope: Any, proto: Any) -> None:
        api = self._api
        assert api is not None, "__rsgi_init__ has not opened the API"
        if scope.proto != "http":
            return
        method: str = scope.method
        headers = scope.headers
        request_id = headers.get("x-request-id")
        route, collection_id = ROUTES.match(scope.path)
        if route is not None:
            # GET and HEAD handlers never read a body: no reader is built for them.
            if method in _BODILESS:
                read_body, content_type = no_body, None
            else:
                read_body = partial(_read_body, proto, headers.get("content-length"), self._body_timeout_s)
                content_type = headers.get("content-type")
            authorization = headers.get("authorization")
            if authorization is not None:  # every line, joined (see Incoming.authorization)
                authorization = ", ".join(v for k, v in headers.items() if k == "authorization")
            forwarded_for = headers.get("x-forwarded-for")
            if forwarded_for is not None:  # every line, joined (Incoming.forwarded_for)
                forwarded_for = ", ".join(v for k, v in headers.items() if k == "x-forwarded-for")
            if_none_match = headers.get("if-none-match")
            if if_none_match is not None:  # every line, joined (Incoming.if_none_match)
                if_none_match = ", ".join(v for k, v in headers.items() if k == "if-none-match")
            # Every field by position: by keyword, building it costs 0.22 µs instead of 0.12
            # (perf/RESULTS.md, "The cached path by structure").
            incoming = Incoming(
                route,
                method,
                collection_id,
                request_id,
                authorization,
                read_body,
                scope.query_string,
                headers.get("traceparent") if api.traced else None,
                content_type,
                scope.client.rpartition(":")[0].strip("[]") or None,  # "host:port", "[v6]:port"
                forwarded_for,
                if_none_match,
                headers.get("accept-encoding"),
                headers.get("origin") if api.cors else None,
                headers.get("access-control-request-method") if api.cors else None,
            )
            try:
                reply, answered_id = await api.answer(incoming)
            except BodyTimeout:
                reply = api.refuse(
                    problems.timeout("body", self._body_timeout_s), route.template, method, request_id
                )
            else:
                # The id added here, in the one header list, not by a second Reply (perf/RESULTS.md,
                # "The cached path by structure": 0.15 µs a Reply).
                if reply.status in BODILESS:  # a 204 or 304: no Content-Type
                    response_headers = [*reply.headers, ("x-request-id", answered_id)]
                else:
                    response_headers = [
                        ("content-type", reply.content_type),
                        *reply.headers,
                        ("x-request-id", answered_id),
                    ]
                proto.response_bytes(reply.status, response_headers, b"" if method == "HEAD" else reply.body)
                return
        else:
            reply = api.unmatched(scope.path, method, request_id)
        response_headers = [("content-type", reply.content_type), *reply.headers]
        proto.response_bytes(reply.status, response_headers, b"" if method == "HEAD" else reply.body)


def app(open_api: OpenApi, settings: Settings) -> RsgiApp:
    """The app around ``open_api`` (Granian has no body timeout of its own: the settings give it)."""
    return RsgiApp(open_api, body_timeout_s=settings.body_timeout_s)
