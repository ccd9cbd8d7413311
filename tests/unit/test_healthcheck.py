"""The image's liveness probe: where it looks, and what it answers for a real listener."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from influencer_stats.healthcheck import address, main, url


@pytest.mark.parametrize(
    ("host", "probed"),
    [
        ("0.0.0.0", "127.0.0.1"),  # a wildcard bind: the loopback of its family
        ("::", "::1"),
        ("", "127.0.0.1"),
        ("127.0.0.2", "127.0.0.2"),  # any other address as it is: the probe used to try 127.0.0.1 only
        ("::1", "::1"),
        ("10.1.2.3", "10.1.2.3"),
        ("localhost", "localhost"),
    ],
)
def test_the_probe_looks_where_the_service_binds(host: str, probed: str) -> None:
    assert address({"INFLUENCER_STATS_HOST": host, "INFLUENCER_STATS_PORT": "9001"}) == (probed, 9001)


def test_unset_variables_mean_the_service_s_defaults() -> None:
    assert address({}) == ("127.0.0.1", 8080)


def test_an_ipv6_address_is_bracketed_in_the_url_it_reports() -> None:
    assert url("::1", 8080) == "http://[::1]:8080/healthz"
    assert url("127.0.0.2", 8080) == "http://127.0.0.2:8080/healthz"


class _Answer(BaseHTTPRequestHandler):
    status = 200

    def do_GET(self) -> None:
        self.send_response(self.status if self.path == "/healthz" else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


class _V6Server(HTTPServer):
    address_family = socket.AF_INET6


@contextmanager
def listening(host: str, status: int = 200) -> Iterator[int]:
    """An HTTP server on ``host`` answering ``/healthz`` with ``status``; yields its port."""
    handler = type("Handler", (_Answer,), {"status": status})
    server = (_V6Server if ":" in host else HTTPServer)((host, 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_a_service_bound_to_another_loopback_address_is_healthy() -> None:
    with listening("127.0.0.2") as port:
        assert main({"INFLUENCER_STATS_HOST": "127.0.0.2", "INFLUENCER_STATS_PORT": str(port)}) == 0
        # What the image's probe did: it asked 127.0.0.1, where nothing listens.
        assert main({"INFLUENCER_STATS_HOST": "127.0.0.1", "INFLUENCER_STATS_PORT": str(port)}) == 1


def test_a_wildcard_bind_is_probed_on_loopback() -> None:
    with listening("0.0.0.0") as port:
        assert main({"INFLUENCER_STATS_HOST": "0.0.0.0", "INFLUENCER_STATS_PORT": str(port)}) == 0


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback here")
def test_an_ipv6_bind_is_probed_on_its_own_family() -> None:
    with listening("::1") as port:
        assert main({"INFLUENCER_STATS_HOST": "::1", "INFLUENCER_STATS_PORT": str(port)}) == 0
        assert main({"INFLUENCER_STATS_HOST": "::", "INFLUENCER_STATS_PORT": str(port)}) == 0


def test_a_non_2xx_answer_an_absent_service_or_a_bad_variable_is_unhealthy_saying_why(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with listening("127.0.0.1", status=503) as port:
        assert main({"INFLUENCER_STATS_PORT": str(port)}) == 1
    assert main({"INFLUENCER_STATS_PORT": str(port)}) == 1  # closed now
    assert main({"INFLUENCER_STATS_PORT": "http"}) == 1

    said = capsys.readouterr().err.splitlines()
    assert said[0] == f"healthcheck: http://127.0.0.1:{port}/healthz: status 503"
    assert said[1].startswith(f"healthcheck: http://127.0.0.1:{port}/healthz: ConnectionRefusedError")
    assert said[2] == "healthcheck: INFLUENCER_STATS_PORT must be a whole number"
