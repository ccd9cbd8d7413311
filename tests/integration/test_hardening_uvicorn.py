"""What a hostile client can cost the servers uvicorn runs (``Server.runner``: ``starlette``, ``asgi``), over real sockets.

Each attack found on uvicorn 0.55 + httptools has a test here (the fix is
``influencer_stats/serving/uvicorn_protocol.py``): pipelining without reading
(1.3 GB in 10 s), slowloris on headers and bodies (never timed out), a full
connection table (``/healthz`` answered a bare 503), and heads without limits
(100 MB headers, 10,000 fields answered 200). The timeouts and the connection
limit are set small so that every test runs in seconds; every loop has a deadline.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Protocol

import httpx
import orjson
import pytest

from influencer_stats.servers import server
from perf.procs import memory_of_tree
from tests.support import SERVERS, RunningService, running_service

#: The servers uvicorn runs (``Server.runner``).
UVICORN_SERVERS = [name for name in SERVERS if server(name).runner == "uvicorn"]
HEADER_TIMEOUT_S = 1.0
BODY_TIMEOUT_S = 1.0
SEND_TIMEOUT_S = 1.0
LIMIT = 8  # INFLUENCER_STATS_LIMIT_CONCURRENCY
MAX_HEADER_BYTES = 16_384  # the defaults
MAX_HEADERS = 100
PROBLEM = "urn:influencer-stats:problem:"
SLACK_S = 3.0  # how much later than its timeout a cut may come on a loaded machine


@pytest.fixture(scope="module", params=UVICORN_SERVERS)
def hardened(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningService]:
    log = tmp_path_factory.mktemp("hardened") / "service.log"
    env = {
        "INFLUENCER_STATS_HEADER_TIMEOUT": str(HEADER_TIMEOUT_S),
        "INFLUENCER_STATS_BODY_TIMEOUT": str(BODY_TIMEOUT_S),
        "INFLUENCER_STATS_SEND_TIMEOUT": str(SEND_TIMEOUT_S),
        "INFLUENCER_STATS_LIMIT_CONCURRENCY": str(LIMIT),
    }
    argv = ["--server", request.param, "--store", "dict", "--logger", "silent"]
    with running_service(argv, log, env=env) as service:
        yield service


class Connect(Protocol):
    def __call__(self, *, rcvbuf: int | None = None) -> socket.socket: ...


@pytest.fixture
def connect(hardened: RunningService) -> Iterator[Connect]:
    """Opens raw connections to the service (with a small receive buffer if asked); closes them all."""
    host, port = hardened.url.removeprefix("http://").split(":")
    opened: list[socket.socket] = []

    def open_one(*, rcvbuf: int | None = None) -> socket.socket:
        sock = socket.socket()
        opened.append(sock)
        if rcvbuf is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        sock.settimeout(5)
        sock.connect((host, int(port)))
        return sock

    try:
        yield open_one
    finally:
        for sock in opened:
            sock.close()


class Responses:
    """HTTP/1.1 responses read off a socket, each by its Content-Length, with a deadline."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""
        self.closed = False

    def _fill(self, deadline: float) -> None:
        self.sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = self.sock.recv(65536)
        except TimeoutError:
            raise AssertionError(f"no answer in time; got so far {self.buffer[:200]!r}") from None
        except ConnectionResetError:
            chunk = b""
        self.closed = not chunk
        self.buffer += chunk

    def next(self, timeout_s: float = 5.0) -> tuple[int, dict[str, str], bytes]:
        deadline = time.monotonic() + timeout_s
        while b"\r\n\r\n" not in self.buffer:
            self._fill(deadline)
            assert not self.closed or b"\r\n\r\n" in self.buffer, f"closed without an answer: {self.buffer!r}"
        head, _, rest = self.buffer.partition(b"\r\n\r\n")
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
        length = int(headers.get("content-length", "0"))
        while len(rest) < length:
            self._fill(deadline)
            assert not self.closed, "closed in the middle of a body"
            rest = self.buffer.partition(b"\r\n\r\n")[2]
        self.buffer = rest[length:]
        return int(status_line.split()[1]), headers, rest[:length]

    def closes(self, timeout_s: float = 5.0) -> bool:
        """Whether the server closes the connection (EOF) within ``timeout_s``, reading what it sends."""
        deadline = time.monotonic() + timeout_s
        while not self.closed and time.monotonic() < deadline:
            try:
                self._fill(deadline)
            except AssertionError:
                return False
        return self.closed


def _assert_problem(status: int, headers: dict[str, str], body: bytes, expected: int, slug: str) -> None:
    assert status == expected, body
    assert headers["content-type"] == "application/problem+json"
    assert headers["connection"] == "close"
    assert len(headers["x-request-id"]) == 16
    document = orjson.loads(body)
    assert (document["type"], document["status"]) == (PROBLEM + slug, expected)


# 1. Pipelining without reading


def test_a_client_that_pipelines_and_never_reads_costs_bounded_memory(
    hardened: RunningService, connect: Connect
) -> None:
    ids = [f"{i:011d}" for i in range(5000)]
    assert httpx.put(f"{hardened.url}/collections/big", json={"videos": ids}).status_code in (200, 201)
    batch = b"GET /collections/big HTTP/1.1\r\nHost: x\r\n\r\n" * 1000
    before = memory_of_tree(hardened.process.pid).rss_mb
    sockets = [connect(rcvbuf=4096) for _ in range(4)]
    sent, deadline = 0, time.monotonic() + 2.0
    while sockets and time.monotonic() < deadline:
        for sock in list(sockets):
            sock.settimeout(0.05)
            try:
                sent += sock.send(batch)
            except TimeoutError:
                pass
            except OSError:  # cut off by the send timeout: fine
                sockets.remove(sock)
    grown = memory_of_tree(hardened.process.pid).rss_mb - before
    for sock in sockets:
        sock.close()

    assert sent > 1_000_000, "the attack did not get going"
    # Unbounded, this grew by ~60 MB per second and connection (a parsed request per 43 bytes).
    assert grown < 40, f"RSS grew by {grown:.0f} MB while {sent / 1e6:.1f} MB of GETs were pipelined"


def test_a_connection_whose_client_reads_nothing_is_cut_after_the_send_timeout(
    hardened: RunningService, connect: Connect
) -> None:
    ids = [f"{i:011d}" for i in range(5000)]
    assert httpx.put(f"{hardened.url}/collections/big", json={"videos": ids}).status_code in (200, 201)
    sock = connect(rcvbuf=4096)
    request = b"GET /collections/big HTTP/1.1\r\nHost: x\r\n\r\n" * 100
    started = time.monotonic()
    cut_after = None
    while time.monotonic() - started < SEND_TIMEOUT_S + SLACK_S:
        sock.settimeout(0.1)
        try:
            sock.send(request)
        except TimeoutError:
            continue
        except OSError:
            cut_after = time.monotonic() - started
            break
        time.sleep(0.01)
    sock.close()

    assert cut_after is not None, "the server kept a connection that read nothing"
    # The request being answered learns of the cut: it writes nothing more (no traceback in the log).
    time.sleep(0.2)
    assert "Traceback" not in hardened.output()


def test_pipelined_requests_past_the_queue_cap_are_all_answered_in_order(
    hardened: RunningService, connect: Connect
) -> None:
    requests, expected = [], []
    for i in range(120):
        if i % 3 == 0:
            body = orjson.dumps({"videos": ["-4lB5EKS5Uk"] * (i % 7 + 1)})
            requests.append(
                b"PUT /collections/piped-%d HTTP/1.1\r\nHost: x\r\nx-request-id: p-%d\r\n"
                b"content-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (i, i, len(body), body)
            )
            expected.append((f"p-{i}", {200, 201}))
        else:
            requests.append(b"GET /healthz HTTP/1.1\r\nHost: x\r\nx-request-id: p-%d\r\n\r\n" % i)
            expected.append((f"p-{i}", {200}))
    sock = connect()
    sock.sendall(b"".join(requests))
    responses = Responses(sock)

    answered = [responses.next() for _ in expected]
    sock.close()

    assert [headers["x-request-id"] for _, headers, _ in answered] == [rid for rid, _ in expected]
    assert all(status in ok for (status, _, _), (_, ok) in zip(answered, expected, strict=True))
    stored = httpx.get(f"{hardened.url}/collections/piped-117").json()
    assert stored == {"videos": ["-4lB5EKS5Uk"] * (117 % 7 + 1)}


# 2. Slowloris and the connection limit


def _trickle(sock: socket.socket, chunk: bytes, seconds: float) -> None:
    """Send ``chunk`` every 0.2 s until the server answers, hangs up, or ``seconds`` pass."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        try:
            sock.sendall(chunk)
        except OSError:
            return
        sock.settimeout(0.2)
        try:
            if sock.recv(1, socket.MSG_PEEK):
                return
        except TimeoutError:
            pass


def test_headers_that_trickle_in_are_cut_off_with_a_408_problem(
    hardened: RunningService, connect: Connect
) -> None:
    sock = connect()
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
    started = time.monotonic()
    _trickle(sock, b"X-Trickle: a\r\n", HEADER_TIMEOUT_S + SLACK_S)
    responses = Responses(sock)

    _assert_problem(*responses.next(), 408, "header-timeout")
    assert time.monotonic() - started >= HEADER_TIMEOUT_S * 0.9
    assert responses.closes()


def test_a_new_connection_that_sends_nothing_is_closed_after_the_header_timeout(
    hardened: RunningService, connect: Connect
) -> None:
    sock = connect()
    started = time.monotonic()

    assert Responses(sock).closes(HEADER_TIMEOUT_S + SLACK_S), "an idle new connection was kept"
    assert time.monotonic() - started >= HEADER_TIMEOUT_S * 0.9


def test_a_body_that_trickles_in_is_cut_off_with_a_408_problem(
    hardened: RunningService, connect: Connect
) -> None:
    sock = connect()
    sock.sendall(
        b"PUT /collections/slow HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"
        b"content-length: 1000\r\n\r\n{"
    )
    _trickle(sock, b" ", BODY_TIMEOUT_S + SLACK_S)
    responses = Responses(sock)

    _assert_problem(*responses.next(), 408, "body-timeout")
    assert responses.closes()
    assert httpx.get(f"{hardened.url}/collections/slow").status_code == 404


def test_over_the_connection_limit_healthz_answers_and_other_requests_get_a_503_problem(
    hardened: RunningService, connect: Connect
) -> None:
    idle = [connect() for _ in range(LIMIT + 2)]
    try:
        deadline = time.monotonic() + HEADER_TIMEOUT_S / 2  # before the idle ones time out
        refused = httpx.get(f"{hardened.url}/collections")
        while refused.status_code != 503 and time.monotonic() < deadline:
            refused = httpx.get(f"{hardened.url}/collections")
        health = httpx.get(f"{hardened.url}/healthz")
        still_refused = httpx.get(f"{hardened.url}/collections").status_code  # the limit held throughout
    finally:
        for sock in idle:
            sock.close()

    assert refused.status_code == 503, "the limit was never reached"
    assert refused.headers["content-type"] == "application/problem+json"
    assert refused.headers["retry-after"] == "1"
    assert len(refused.headers["x-request-id"]) == 16
    assert refused.json()["type"] == PROBLEM + "overloaded"
    assert (health.status_code, health.json()) == (200, {"status": "ok"})
    assert still_refused == 503


# 3. Header limits


def test_a_head_larger_than_the_byte_limit_is_refused_with_a_431_problem(
    hardened: RunningService, connect: Connect
) -> None:
    sock = connect()
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n" % (b"a" * 20_000))
    responses = Responses(sock)

    _assert_problem(*responses.next(), 431, "headers-too-large")
    assert responses.closes()


def test_a_refused_head_is_answered_after_the_responses_pipelined_before_it(
    hardened: RunningService, connect: Connect
) -> None:
    sock = connect()
    sock.sendall(
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nx-request-id: first\r\n\r\n"
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n" % (b"a" * 20_000)
    )
    responses = Responses(sock)

    status, headers, _ = responses.next()
    assert (status, headers["x-request-id"]) == (200, "first")
    _assert_problem(*responses.next(), 431, "headers-too-large")
    assert responses.closes()


def test_more_header_fields_than_the_limit_are_refused_with_a_431_problem(
    hardened: RunningService, connect: Connect
) -> None:
    fields = b"".join(b"X-F%d: v\r\n" % i for i in range(MAX_HEADERS))  # with Host: one too many
    sock = connect()
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n%s\r\n" % fields)
    responses = Responses(sock)

    _assert_problem(*responses.next(), 431, "headers-too-large")
    assert responses.closes()


def test_a_head_within_both_limits_is_served(hardened: RunningService, connect: Connect) -> None:
    fields = b"".join(b"X-F%d: v\r\n" % i for i in range(MAX_HEADERS - 2))
    big = b"a" * (MAX_HEADER_BYTES - 2_000)
    sock = connect()
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n%sX-Big: %s\r\n\r\n" % (fields, big))

    status, _, body = Responses(sock).next()
    sock.close()

    assert (status, body) == (200, b'{"status":"ok"}')


def test_a_header_that_never_ends_is_cut_off_without_being_buffered(
    hardened: RunningService, connect: Connect
) -> None:
    before = memory_of_tree(hardened.process.pid).rss_mb
    sock = connect()
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Endless: ")
    piece, sent = b"a" * 65536, 0
    deadline = time.monotonic() + 5.0
    while sent < 20 * 2**20 and time.monotonic() < deadline:
        sock.settimeout(0.2)
        try:
            sent += sock.send(piece)
        except TimeoutError:
            continue
        except OSError:
            break
    grown = memory_of_tree(hardened.process.pid).rss_mb - before
    sock.close()

    # Socket buffers on both sides absorb a few MB before a send fails.
    assert sent < 8 * 2**20, f"the server read {sent / 2**20:.0f} MB of one header"
    assert grown < 10, f"RSS grew by {grown:.0f} MB"
