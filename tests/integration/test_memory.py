"""Memory stays flat under write load, on every server (a bound, never a speed).

Each server takes a few seconds of wrk PUTs on one collection; the resident
memory of its process tree may not grow by more than ``MAX_BYTES_PER_REQUEST``
for each request served after a warm-up. Granian's Rust task implementation
once kept ~1 KB (and, in the service, far more) for every request whose body
the app read; a soak showed it as 82 -> 252 MB in 60 s. This test catches that
class of leak within seconds, whatever the machine's speed: the bound is per
request, so a slower run only serves fewer of them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perf.procs import memory_of_tree
from perf.wrk import run_wrk
from tests.support import SERVERS, running_service

MAX_BYTES_PER_REQUEST = 256
BODY = '{"videos": ["-4lB5EKS5Uk", "-jlLkTtgWUk", "1FEFpk-uIYo"]}'
PUT_SCRIPT = f"""
wrk.method = "PUT"
wrk.body = '{BODY}'
wrk.headers["Content-Type"] = "application/json"
"""


def put_load(url: str, script: Path, seconds: int) -> int:
    """Requests served by ``seconds`` of wrk PUT load (all of them must be 2xx)."""
    measured, output = run_wrk(url, threads=1, connections=32, duration_s=seconds, script=script)
    assert measured.non_2xx == 0 and measured.socket_errors.total == 0, output
    return measured.requests


@pytest.mark.parametrize("server", SERVERS)
def test_write_load_does_not_grow_memory_per_request(server: str, tmp_path: Path) -> None:
    script = tmp_path / "put.lua"
    script.write_text(PUT_SCRIPT)
    argv = ["--server", server, "--store", "dict", "--logger", "silent"]
    with running_service(argv, tmp_path / f"{server}.log") as service:
        url = f"{service.url}/collections/memory"
        put_load(url, script, 2)  # warm-up: allocator pools, caches, connections
        before = memory_of_tree(service.process.pid).rss_mb
        requests = put_load(url, script, 4)
        after = memory_of_tree(service.process.pid).rss_mb

    growth = max(0.0, after - before) * 1024 * 1024
    assert requests > 1000, f"only {requests} requests: the load did not run"
    assert growth / requests <= MAX_BYTES_PER_REQUEST, (
        f"{server}: RSS {before:.1f} -> {after:.1f} MB over {requests:,} PUTs "
        f"({growth / requests:.0f} bytes per request)"
    )
