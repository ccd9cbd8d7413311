"""What a hostile client can cost each runner (aiohttp, Granian, uvicorn), over real sockets.

Found on aiohttp 3.14 and Granian 2.8.9 (the fixes are in their runners, in
their rooms under ``influencer_stats/servers/``, and in the body reads of their
adapters): headers trickled in for 30 s (Granian) or a body
forever (both); Granian kept a connection that never spoke open forever and,
with 2,200 slow uploads, made ``/healthz`` wait ~15 s; a second Granian on
the same port started and split the traffic; Granian answered a 100 KB header
with 200 and aiohttp applied none of our header settings. The timeouts are set
small so that every test runs in seconds; every loop has a deadline.
"""

from __future__ import annotations

import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path

import httpx
import orjson
import pytest

from influencer_stats.servers import server as server_named
from perf.procs import memory_of_tree, stop
from tests.support import ROOT, RunningService, free_port, running_service, wait_until_healthy
from tests.support import SERVERS as ALL_SERVERS


def _one_per_runner(servers: list[str]) -> list[str]:
    """The first of ``servers`` on each runner (the core's on uvicorn): the attacks here are on what a
    runner reads; test_hardening_uvicorn attacks uvicorn's protocol further."""
    first: dict[str, str] = {}
    for name in servers:
        first.setdefault(server_named(name).runner, name)
    return list(first.values())


SERVERS = _one_per_runner(ALL_SERVERS)
#: Those that count header fields (``Server.too_many_headers``): ``INFLUENCER_STATS_MAX_HEADERS`` applies.
COUNTING = [name for name in SERVERS if server_named(name).too_many_headers is not None]
SHORT_S = 1.0  # a timeout under test
LONG_S = 30.0  # the other timeout, so that only the one under test can explain a cut
SLACK_S = 2.5  # how much later than its timeout a cut may come on a loaded machine
PROBLEM = "urn:influencer-stats:problem:"


@contextmanager
def serving(server: str, tmp_path: Path, env: Mapping[str, str] | None = None) -> Iterator[RunningService]:
    argv = ["--server", server, "--store", "dict", "--logger", "silent"]
    with running_service(argv, tmp_path / f"{server}.log", env=env) as service:
        yield service


def _port(service: RunningService) -> int:
    return int(service.url.rsplit(":", 1)[1])


def _connect(service: RunningService, *, rcvbuf: int | None = None) -> socket.socket:
    sock = socket.socket()
    if rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.settimeout(5)
    try:
        sock.connect(("127.0.0.1", _port(service)))
    except OSError:
        sock.close()
        raise
    return sock


def _closed_within(sock: socket.socket, seconds: float, *, trickle: bytes = b"") -> float | None:
    """Seconds until the server closes ``sock`` (reading and dropping what it sends), else None.

    With ``trickle``, one more line of it goes out every 0.2 s meanwhile, as a slowloris sends.
    """
    started = time.monotonic()
    sent = 0
    while (elapsed := time.monotonic() - started) < seconds:
        readable, _, _ = select.select([sock], [], [], 0.2)
        try:
            if readable and not sock.recv(65536):
                return elapsed
            if trickle:
                sent += 1
                sock.sendall(b"X-Slow-%d: %s\r\n" % (sent, trickle))
        except OSError:  # reset, or a send after the server closed
            return elapsed
    return None


def _answer(sock: socket.socket, seconds: float = 5.0) -> tuple[int | None, dict[str, str], bytes]:
    """The status, headers and body of one answer; status None when the server closed without one."""
    deadline = time.monotonic() + seconds
    data = b""
    while not _whole(data) and time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            break
        except OSError:  # reset
            chunk = b""
        if not chunk:
            break
        data += chunk
    head, separator, body = data.partition(b"\r\n\r\n")
    if not separator:
        return None, {}, b""
    return int(head.split()[1]), _headers(head), body


def _whole(data: bytes) -> bool:
    head, separator, body = data.partition(b"\r\n\r\n")
    return bool(separator) and len(body) >= int(_headers(head).get("content-length", "0"))


def _headers(head: bytes) -> dict[str, str]:
    lines = head.decode("latin-1").split("\r\n")[1:]
    return {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}


def _send(service: RunningService, request: bytes) -> int | None:
    """The status a fresh connection gets for ``request`` (None: closed or reset without one)."""
    with _connect(service) as sock:
        with suppress(OSError):  # the server refused and closed before reading it all
            sock.sendall(request)
        return _answer(sock)[0]


def _assert_problem(answer: tuple[int | None, dict[str, str], bytes], status: int, slug: str) -> None:
    got, headers, body = answer
    assert got == status, (got, headers, body)
    assert headers["content-type"] == "application/problem+json"
    assert len(headers["x-request-id"]) == 16
    document = orjson.loads(body)
    assert (document["type"], document["status"]) == (PROBLEM + slug, status)


# 1. Slowloris: headers, bodies, idle and silent connections


@pytest.mark.parametrize("server", SERVERS)
def test_headers_that_trickle_in_are_cut_off_after_the_header_timeout(server: str, tmp_path: Path) -> None:
    env = {"INFLUENCER_STATS_HEADER_TIMEOUT": str(SHORT_S), "INFLUENCER_STATS_KEEPALIVE": str(LONG_S)}
    with serving(server, tmp_path, env) as service, _connect(service) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        cut = _closed_within(sock, SHORT_S + SLACK_S, trickle=b"1")

    assert cut is not None, f"{server} still reads headers {SHORT_S + SLACK_S} s later"


@pytest.mark.parametrize("server", SERVERS)
def test_an_idle_connection_is_closed_after_the_keepalive(server: str, tmp_path: Path) -> None:
    env = {"INFLUENCER_STATS_KEEPALIVE": str(SHORT_S), "INFLUENCER_STATS_HEADER_TIMEOUT": str(LONG_S)}
    with serving(server, tmp_path, env) as service, _connect(service) as idle:
        idle.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert _answer(idle)[0] == 200
        cut = _closed_within(idle, SHORT_S + SLACK_S)

    assert cut is not None, f"{server}: an idle connection still open {SHORT_S + SLACK_S} s later"


@pytest.mark.parametrize("server", SERVERS)
def test_a_connection_that_never_speaks_is_closed_after_its_timeout(server: str, tmp_path: Path) -> None:
    # Granian kept one that never sent a byte forever (HTTP/1-or-2 sniffing, no timer); a runner may
    # hold it to the keepalive (Granian, aiohttp) or to the header timeout (uvicorn): both are short.
    env = {"INFLUENCER_STATS_KEEPALIVE": str(SHORT_S), "INFLUENCER_STATS_HEADER_TIMEOUT": str(SHORT_S)}
    with serving(server, tmp_path, env) as service, _connect(service) as silent:
        cut = _closed_within(silent, SHORT_S + SLACK_S)

    assert cut is not None, f"{server}: a silent connection still open {SHORT_S + SLACK_S} s later"


@pytest.mark.parametrize("server", SERVERS)
def test_a_body_that_trickles_in_is_answered_408_after_the_body_timeout(server: str, tmp_path: Path) -> None:
    env = {"INFLUENCER_STATS_BODY_TIMEOUT": str(SHORT_S)}
    with serving(server, tmp_path, env) as service, _connect(service) as sock:
        sock.sendall(b"PUT /collections/slow HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
        started = time.monotonic()
        answer = _answer(sock, SHORT_S + SLACK_S)
        took = time.monotonic() - started
        stored = httpx.get(f"{service.url}/collections/slow").status_code

    _assert_problem(answer, 408, "body-timeout")
    assert answer[1]["connection"] == "close"
    assert took >= SHORT_S * 0.9
    assert stored == 404


@pytest.mark.parametrize("server", SERVERS)
def test_a_body_that_arrives_within_the_body_timeout_is_stored(server: str, tmp_path: Path) -> None:
    body = b'{"videos": ["-4lB5EKS5Uk"]}'
    head = b"PUT /collections/paced HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body)
    with (
        serving(server, tmp_path, {"INFLUENCER_STATS_BODY_TIMEOUT": "2"}) as service,
        _connect(service) as sock,
    ):
        sock.sendall(head + body[:10])
        time.sleep(0.5)
        sock.sendall(body[10:])
        status = _answer(sock)[0]

    assert status == 201


@pytest.mark.parametrize("server", SERVERS)
def test_healthz_answers_while_slow_uploads_hold_more_connections_than_the_backlog(
    server: str, tmp_path: Path
) -> None:
    # Granian served at most its backlog's worth of connections at once (2,048 by default;
    # 128 here, its minimum): slow uploads beyond it made /healthz wait in the accept queue.
    env = {"INFLUENCER_STATS_BACKLOG": "128"}
    with serving(server, tmp_path, env) as service:
        uploads = []
        try:
            for n in range(300):
                try:
                    sock = _connect(service)
                except TimeoutError:
                    pytest.fail(f"{server} stopped accepting connections after {n} slow uploads")
                uploads.append(sock)
                sock.sendall(b"PUT /collections/slow HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
            time.sleep(0.3)
            probes = []
            for _ in range(5):
                try:
                    probes.append(httpx.get(f"{service.url}/healthz", timeout=1.0).status_code)
                except httpx.TimeoutException:
                    probes.append(-1)
        finally:
            for sock in uploads:
                sock.close()

    assert probes == [200] * 5


# 2. One port, one instance


@pytest.mark.parametrize("server", ALL_SERVERS)
def test_a_second_instance_on_the_same_port_exits_1_and_the_first_keeps_serving(
    server: str, tmp_path: Path
) -> None:
    with serving(server, tmp_path) as first:
        assert httpx.put(f"{first.url}/collections/mine", json={"videos": ["-4lB5EKS5Uk"]}).status_code == 201
        argv = [sys.executable, "main.py", "--server", server, "--store", "dict", "--port", str(_port(first))]
        with (tmp_path / "second.log").open("wb") as log:
            second = subprocess.Popen(argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        try:
            second.wait(timeout=10)
        except subprocess.TimeoutExpired:
            stop(second)
            pytest.fail(f"a second {server} started on the port of the first")
        reads = [httpx.get(f"{first.url}/collections/mine").status_code for _ in range(20)]

    assert second.returncode == 1
    # One line says why; the rest (if any) is the service's JSON log.
    output = (tmp_path / "second.log").read_text()
    said = [line for line in output.splitlines() if line and not line.startswith("{")]
    assert said == [
        f"influencer-stats: error: cannot listen on 127.0.0.1:{_port(first)}: address already in use"
    ]
    assert reads == [200] * 20


@pytest.mark.parametrize("server", SERVERS)
def test_two_instances_started_at_once_on_one_port_leave_exactly_one_serving(
    server: str, tmp_path: Path
) -> None:
    # Both passed a bind probe before either listened; on SO_REUSEPORT both then served.
    port = free_port()
    argv = [sys.executable, "main.py", "--server", server, "--store", "dict", "--port", str(port)]
    processes = []
    for n in range(2):
        with (tmp_path / f"instance-{n}.log").open("wb") as log:
            processes.append(subprocess.Popen(argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT))
    try:
        deadline = time.monotonic() + 10
        while all(process.poll() is None for process in processes) and time.monotonic() < deadline:
            time.sleep(0.05)
        survivors = [process for process in processes if process.poll() is None]
        if len(survivors) == 1:
            wait_until_healthy(f"http://127.0.0.1:{port}", survivors[0])
        exits = sorted((process.poll() for process in processes), key=str)
    finally:
        for process in processes:
            stop(process)

    assert exits == [1, None]


# 3. Header limits


@pytest.mark.parametrize("server", SERVERS)
def test_a_header_block_within_the_limit_is_served_and_one_beyond_it_refused(
    server: str, tmp_path: Path
) -> None:
    def with_header(size: int) -> bytes:
        return b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * size + b"\r\n\r\n"

    with serving(server, tmp_path) as service:  # INFLUENCER_STATS_MAX_HEADER_BYTES: 16,384
        within = _send(service, with_header(12_000))  # aiohttp refused a line over 8,190 bytes
        beyond = _send(service, with_header(20_000))  # Granian served up to ~400 KB

    assert (within, beyond) == (200, server_named(server).too_large_headers)


@pytest.mark.parametrize("server", COUNTING)
def test_more_header_fields_than_the_limit_are_refused(server: str, tmp_path: Path) -> None:
    def with_fields(count: int) -> bytes:
        fields = b"".join(b"X-F%d: v\r\n" % n for n in range(count - 1))
        return b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + fields + b"\r\n"

    with serving(server, tmp_path, {"INFLUENCER_STATS_MAX_HEADERS": "20"}) as service:
        statuses = _send(service, with_fields(20)), _send(service, with_fields(21))

    assert statuses == (200, server_named(server).too_many_headers)  # aiohttp's own limit was 128


@pytest.mark.parametrize("server", SERVERS)
def test_a_100_kb_header_and_10000_headers_are_refused_without_growing_memory(
    server: str, tmp_path: Path
) -> None:
    huge = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n"
    many = b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-H%d: v\r\n" % n for n in range(10_000))
    many += b"\r\n"
    with serving(server, tmp_path) as service:
        for _ in range(5):  # warm-up: buffers and allocator pools
            _send(service, huge)
            _send(service, many)
        before = memory_of_tree(service.process.pid).rss_mb
        statuses = {status for _ in range(40) for status in (_send(service, huge), _send(service, many))}
        grown = memory_of_tree(service.process.pid).rss_mb - before
        health = httpx.get(f"{service.url}/healthz").status_code

    # A server that stops reading may reset the connection before its refusal is read: None.
    assert statuses <= {400, 431, None} and statuses != {None}, statuses
    assert grown < 5, f"{server}: RSS grew {grown:.1f} MB over 80 refused heads"
    assert health == 200


# 4. Pipelining without reading


@pytest.mark.parametrize("server", SERVERS)
def test_a_client_that_pipelines_and_never_reads_costs_bounded_memory(server: str, tmp_path: Path) -> None:
    ids = [f"{n:011d}" for n in range(5000)]
    with serving(server, tmp_path) as service:
        assert httpx.put(f"{service.url}/collections/big", json={"videos": ids}).status_code == 201
        assert httpx.get(f"{service.url}/collections/big").status_code == 200  # warm-up
        batch = b"GET /collections/big HTTP/1.1\r\nHost: x\r\n\r\n" * 1000  # each answer ~75 KB
        before = memory_of_tree(service.process.pid).rss_mb
        sockets = [_connect(service, rcvbuf=4096) for _ in range(4)]
        sent, peak, deadline = 0, before, time.monotonic() + 3.0
        try:
            while time.monotonic() < deadline:
                for sock in sockets:
                    sock.settimeout(0.05)
                    with suppress(TimeoutError):
                        sent += sock.send(batch)
                peak = max(peak, memory_of_tree(service.process.pid).rss_mb)
        finally:
            for sock in sockets:
                sock.close()
        health = httpx.get(f"{service.url}/healthz").status_code

    assert sent >= 4 * len(batch), "the attack did not get going"
    # Answered without flow control, 4,000 answers of ~75 KB would hold ~300 MB.
    assert peak - before < 20, f"{server}: RSS {before:.1f} -> {peak:.1f} MB"
    assert health == 200
