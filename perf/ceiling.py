"""The ceiling: the fastest this server stack can answer, with no service behind it.

A raw ASGI application that answers every GET with a constant JSON body the
size of a stats answer, served by uvicorn with the settings
:func:`influencer_stats.bootstrap.serve` uses (access log off, log level
warning, no ``server`` header; uvloop and httptools when installed, as
uvicorn's ``auto`` picks them). A profile's ``ceiling %`` is its req/s over
this app's::

    python -m perf.ceiling --port 8090
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any, Final

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

BODY: Final = b'{"impressions":18760776,"engagements":383586,"score":710585,"videos":3,"missing":[]}'
"""The stats answer of the original three-video collection, byte for byte."""

_OK_HEADERS: Final = [
    (b"content-type", b"application/json"),
    (b"content-length", str(len(BODY)).encode()),
]
_NOT_ALLOWED_HEADERS: Final = [(b"allow", b"GET"), (b"content-length", b"0")]


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    """200 and :data:`BODY` for any GET, 405 otherwise; lifespan events are acknowledged."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http":
        return
    if scope["method"] == "GET":
        await send({"type": "http.response.start", "status": 200, "headers": _OK_HEADERS})
        await send({"type": "http.response.body", "body": BODY})
    else:
        await send({"type": "http.response.start", "status": 405, "headers": _NOT_ALLOWED_HEADERS})
        await send({"type": "http.response.body", "body": b""})


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m perf.ceiling", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8090)
    args = parser.parse_args(argv)

    import uvicorn

    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        lifespan="on",
        access_log=False,
        log_level="warning",
        server_header=False,
        timeout_graceful_shutdown=10,
    )


if __name__ == "__main__":
    main()
