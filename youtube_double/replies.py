"""Turning bodies into aiohttp responses, the faulty ones included (an aborted connection)."""

from __future__ import annotations

from typing import NoReturn

from aiohttp import web

from youtube_double.wire import dump_json


def json_response(status: int, obj: object) -> web.Response:
    """``obj`` as compact JSON with ``status``."""
    return web.Response(status=status, body=dump_json(obj), content_type="application/json", charset="UTF-8")


def bytes_response(body: bytes) -> web.Response:
    """A 200 whose JSON body is already serialised (or deliberately broken)."""
    return web.Response(status=200, body=body, content_type="application/json", charset="UTF-8")


class _ConnectionAborted(web.HTTPInternalServerError):
    """Raised after the transport was aborted; aiohttp cannot write it anywhere."""


def abort_connection(request: web.Request) -> NoReturn:
    """Drop the connection without a response (the ``reset`` fault)."""
    transport = request.transport
    if transport is not None:
        transport.abort()
    # The transport is closing, so aiohttp's attempt to send this exception's
    # response fails with ConnectionResetError, which it treats as a client
    # disconnect: nothing reaches the wire and nothing is logged as an error.
    raise _ConnectionAborted()
