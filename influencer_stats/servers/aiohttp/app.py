"""The API on aiohttp.web.

Routed by hand, as the ASGI and RSGI apps are: one catch-all route matches
the path as received with ``ROUTES.match_raw``, which decodes the id only once
split off (aiohttp's router would refuse ``{`` in one).

No answer names the versions of Python and aiohttp, which aiohttp sends in a
``Server`` header by default (``Python/3.11 aiohttp/3.14.5``): the app's
answers carry none, as uvicorn's; the text/plain 400s aiohttp's parser gives
before any app code runs, which no hook reaches (aio-libs/aiohttp#6463), say
``Server: aiohttp``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from functools import partial
from urllib.parse import unquote

from aiohttp import web, web_response
from aiohttp.http_exceptions import PayloadEncodingError

from influencer_stats.bootstrap.edge import ROUTES
from influencer_stats.http import problems
from influencer_stats.http.api import HttpApi
from influencer_stats.http.body import BodyIncomplete, BodyTimeout, read_request_body
from influencer_stats.http.incoming import Incoming
from influencer_stats.http.problems import BODILESS, Reply
from influencer_stats.serving.server import OpenApi
from influencer_stats.settings import Settings

_API: web.AppKey[HttpApi] = web.AppKey("api", HttpApi)
_BODY_TIMEOUT: web.AppKey[float] = web.AppKey("body_timeout_s", float)
#: What aiohttp says in ``Server`` where the app cannot take the header off: no version.
_SERVER = "aiohttp"


def _response(reply: Reply) -> web.Response:
    if reply.status in BODILESS:  # no Content-Type (aiohttp takes off the Content-Length itself)
        response = web.Response(status=reply.status)
    else:
        # Content-Type as a header: aiohttp's content_type= refuses parameters (charset).
        response = web.Response(
            body=reply.body, status=reply.status, headers={"Content-Type": reply.content_type}
        )
    for name, value in reply.headers:
        response.headers[name] = value
    return response


async def _read_body(request: web.Request, limit: int) -> bytes | None:
    try:
        async with asyncio.timeout(request.app[_BODY_TIMEOUT]):  # aiohttp has no body timeout
            return await read_request_body(request.content.iter_any(), limit, request.content_length)
    except (ConnectionError, PayloadEncodingError) as exc:  # the client went away mid-body
        raise BodyIncomplete("the client disconnected") from exc
    except TimeoutError:
        raise BodyTimeout from None


async def _dispatch(request: web.Request) -> web.Response:
    """Every request: ``ROUTES.match_raw`` on the path as received, then ``HttpApi``."""
    api, headers, method = request.app[_API], request.headers, request.method
    # CONNECT's target is authority-form for aiohttp (an empty URL path): take it as sent.
    raw_path = request.rel_url.raw_path or request.raw_path.partition("?")[0]
    route, collection_id = ROUTES.match_raw(raw_path)
    if route is None:
        return _response(api.unmatched(unquote(raw_path), method, headers.get("x-request-id")))
    authorization = headers.getall("authorization", None)  # every line, joined (Incoming)
    incoming = Incoming(
        route,
        method,
        collection_id,
        headers.get("x-request-id"),
        ", ".join(authorization) if authorization else None,
        partial(_read_body, request),
        query=request.rel_url.raw_query_string,
        traceparent=headers.get("traceparent") if api.traced else None,
        content_type=headers.get("content-type"),
        peer=request.remote,
        forwarded_for=", ".join(headers.getall("x-forwarded-for", ())) or None,
        if_none_match=", ".join(headers.getall("if-none-match", ())) or None,
        accept_encoding=headers.get("accept-encoding"),
        origin=headers.get("origin") if api.cors else None,
        cors_method=headers.get("access-control-request-method") if api.cors else None,
    )
    try:
        reply = await api.serve(incoming)
    except BodyTimeout:
        timeout = problems.timeout("body", request.app[_BODY_TIMEOUT])
        reply = api.refuse(timeout, route.template, method, headers.get("x-request-id"))
    return _response(reply)


@web.middleware
async def _unmatched(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """aiohttp's own refusals become the shared problems; what its router cannot route
    (a CONNECT, ``OPTIONS *``) is dispatched like everything else."""
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status == 404:
            return await _dispatch(request)
        if exc.status == 413:
            reply = problems.body_too_large(HttpApi.max_body_bytes)
        else:
            reply = problems.problem(exc.status, "http-error", "HTTP error", exc.reason)
        api = request.app[_API]
        return _response(api.refuse(reply, "unmatched", request.method, request.headers.get("x-request-id")))


class _WithoutInput(logging.Filter):
    """aiohttp's own log lines without what the client sent.

    A request aiohttp cannot parse is logged with the exception, whose text
    quotes the offending request line or header line (an Authorization value
    included): the line keeps the exception's type, never its text or traceback.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info is not None and record.exc_info[1] is not None:
            record.msg = f"{record.msg} ({type(record.exc_info[1]).__name__})"
            record.exc_info = record.exc_text = None
        return True


def _server_logger() -> logging.Logger:
    logger = logging.getLogger(__name__)
    if not any(isinstance(f, _WithoutInput) for f in logger.filters):
        logger.addFilter(_WithoutInput())
    return logger


async def _without_server(request: web.Request, response: web.StreamResponse) -> None:
    """Every answer of the app without the ``Server`` header aiohttp has just set."""
    response.headers.popall("Server", None)


def create_app(open_api: OpenApi, *, body_timeout_s: float) -> web.Application:
    """An aiohttp app whose cleanup context opens the API (and its resources) once."""
    # aiohttp reads its default at each response: the parser's own refusals, which no hook
    # reaches, name no version either (a setting of this process's aiohttp, as the logger's).
    web_response.SERVER_SOFTWARE = _SERVER  # type: ignore[attr-defined]  # imported there, not exported

    async def lifespan(app: web.Application) -> AsyncIterator[None]:
        async with open_api() as api:
            app[_API] = api
            yield

    # client_max_size above our own limit so _read_body answers 413 itself.
    app = web.Application(
        middlewares=[_unmatched],
        client_max_size=HttpApi.max_body_bytes + 1,
        handler_args={"logger": _server_logger()},
    )
    app[_BODY_TIMEOUT] = body_timeout_s
    app.cleanup_ctx.append(lifespan)
    app.on_response_prepare.append(_without_server)
    # "*": every method reaches HttpApi, which answers 405 or 400 itself.
    app.router.add_route("*", "/{path:.*}", _dispatch)
    return app


@contextmanager
def lifespan(app: web.Application, loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """The app's cleanup context run as its runner runs it (``Server.lifespan``)."""
    runner = web.AppRunner(app)
    loop.run_until_complete(runner.setup())
    try:
        yield
    finally:
        loop.run_until_complete(runner.cleanup())


def app(open_api: OpenApi, settings: Settings) -> web.Application:
    """The app around ``open_api`` (aiohttp has no body timeout of its own: the settings give it)."""
    return create_app(open_api, body_timeout_s=settings.body_timeout_s)
