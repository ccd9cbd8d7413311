"""The hardened uvicorn protocol's bounds, exactly, on a recording transport (no socket, no timer fires)."""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.config import Config
from uvicorn.server import ServerState

from influencer_stats.serving.uvicorn_protocol import (
    _SLICE,
    HardenedHttpToolsProtocol,
    Limits,
    protocol_class,
)

LIMITS = Limits(
    header_timeout_s=60.0,
    body_timeout_s=60.0,
    send_timeout_s=60.0,
    max_header_bytes=16_384,
    max_headers=100,
    max_pipelined=16,
    exempt_paths=frozenset({"/healthz"}),
)
GET = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"


class Transport(asyncio.Transport):
    """Records what the protocol writes and whether it reads."""

    def __init__(self) -> None:
        super().__init__()
        self.written = b""
        self.reading = True
        self.closed = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8080), "peername": ("127.0.0.1", 5000)}.get(name, default)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written += bytes(data)

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def is_reading(self) -> bool:
        return self.reading

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True


class App:
    """Answers 200 once ``release`` is set; counts the requests it started."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.started = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.started += 1
        await self.release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})


def connected(app: App) -> tuple[HardenedHttpToolsProtocol, Transport]:
    bound = protocol_class(LIMITS)
    config = Config(app=app, http=bound, lifespan="off", log_config=None, access_log=False)
    config.load()
    assert config.http_protocol_class is bound  # uvicorn takes the class as it is
    protocol = bound(
        config=config, server_state=ServerState(), app_state={}, _loop=asyncio.get_running_loop()
    )
    transport = Transport()
    protocol.connection_made(transport)
    return protocol, transport


async def test_one_read_of_pipelined_requests_queues_at_most_the_cap_plus_one_slice() -> None:
    app = App()
    protocol, transport = connected(app)

    protocol.data_received(GET * 1000)
    await asyncio.sleep(0)

    assert app.started == 1
    assert LIMITS.max_pipelined <= len(protocol.pipeline) <= LIMITS.max_pipelined + _SLICE // len(GET) + 1
    assert not transport.is_reading()
    protocol.flow.resume_reading()  # what a running request's receive() does: refused while the queue is full
    assert not transport.is_reading()

    app.release.set()
    for _ in range(10_000):
        if transport.written.count(b"HTTP/1.1 200") == 1000:
            break
        await asyncio.sleep(0)
    assert transport.written.count(b"HTTP/1.1 200") == 1000  # every one answered, in the end
    assert transport.is_reading()
    protocol.connection_lost(None)


async def test_a_header_arriving_in_small_reads_is_refused_at_most_one_slice_past_the_limit() -> None:
    protocol, transport = connected(App())
    fed = 0
    protocol.data_received(b"GET / HTTP/1.1\r\nHost: x\r\nX-Endless: ")
    while not transport.is_closing() and fed < 1_000_000:
        protocol.data_received(b"a" * 1000)
        fed += 1000

    assert fed <= LIMITS.max_header_bytes + _SLICE + 1000
    assert transport.written.startswith(b"HTTP/1.1 431 ")
    assert b"urn:influencer-stats:problem:headers-too-large" in transport.written
    protocol.connection_lost(None)


async def test_a_refusal_waits_for_the_response_in_progress() -> None:
    app = App()
    protocol, transport = connected(app)

    protocol.data_received(GET + b"GET / HTTP/1.1\r\nX-Big: " + b"a" * 20_000 + b"\r\n\r\n")
    await asyncio.sleep(0)
    assert transport.written == b""
    assert not transport.is_closing()

    app.release.set()
    for _ in range(100):
        if transport.is_closing():
            break
        await asyncio.sleep(0)
    first, _, second = transport.written.partition(b"ok")
    assert first.startswith(b"HTTP/1.1 200 ")
    assert second.startswith(b"HTTP/1.1 431 ")
    assert transport.is_closing()
    protocol.connection_lost(None)
