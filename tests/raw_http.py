"""Requests sent as raw bytes over a socket, for what an HTTP client would not send (or would
correct): the suites that compare the servers' answers byte for byte use these.
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass

import orjson


@dataclass(frozen=True)
class RawAnswer:
    status: int
    headers: dict[str, str]  # names lower-cased; a repeated name keeps its last value
    body: bytes

    def problem(self) -> dict[str, object]:
        assert self.headers["content-type"] == "application/problem+json", self
        assert self.headers["x-request-id"], self
        document: dict[str, object] = orjson.loads(self.body)
        assert document["status"] == self.status
        return document


def address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


def raw_request(url: str, request: bytes, timeout: float = 5.0) -> RawAnswer:
    """Send ``request`` as it is (it must ask for ``Connection: close``); read until the server closes."""
    with socket.create_connection(address(url), timeout=timeout) as sock:
        sock.sendall(request)
        received = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            chunk = sock.recv(65_536)
            if not chunk:
                break
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {
        name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)
    }
    return RawAnswer(int(status_line.split(" ")[1]), headers, body)


def request_bytes(
    method: bytes, target: bytes, *extra: bytes, body: bytes = b"", host: bytes = b"127.0.0.1"
) -> bytes:
    lines = [method + b" " + target + b" HTTP/1.1", b"Host: " + host, b"Connection: close", *extra]
    if body:
        lines.append(b"Content-Length: " + str(len(body)).encode())
    return b"\r\n".join(lines) + b"\r\n\r\n" + body
