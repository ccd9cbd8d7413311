"""The nginx static-file double, served by a real local nginx on 127.0.0.1."""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from youtube_double import render_videos_list
from youtube_double.nginx_double import (
    KEY_PIECE_CHARS,
    nginx_argv,
    nginx_conf,
    server_block,
    write_site,
)

NGINX = "/usr/sbin/nginx"
BOUND = 10.0  # seconds: upper bound of every wait

SMALL = [synthetic_video_id(i) for i in range(3)]
WITH_UNKNOWN = [synthetic_video_id(10), "Xdeleted01", synthetic_video_id(11)]
FULL = [synthetic_video_id(100 + i) for i in range(50)]  # key longer than one file name
ONLY_UNKNOWN = ["Xgone00000"]


@dataclass(frozen=True)
class Nginx:
    port: int
    run_dir: Path

    def get(self, path: str) -> tuple[int, str, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=BOUND)
        try:
            conn.request("GET", path)
            resp = conn.getresponse()
            return resp.status, resp.getheader("Content-Type", ""), resp.read()
        finally:
            conn.close()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_until_listening(proc: subprocess.Popen[bytes], port: int, run_dir: Path) -> None:
    """Bounded wait for nginx to accept connections (or fail fast if it exited)."""
    deadline = time.monotonic() + BOUND
    while True:
        if proc.poll() is not None:
            log = run_dir / "error.log"
            detail = log.read_text() if log.exists() else "(no error log)"
            pytest.fail(f"nginx exited with {proc.returncode}: {detail}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=BOUND):
                return
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                pytest.fail(f"nginx did not listen on {port} within {BOUND} s")
            time.sleep(0.01)


@pytest.fixture
def nginx(tmp_path: Path) -> Iterator[Nginx]:
    assert os.access(NGINX, os.X_OK), f"{NGINX} is required for this test"
    site, run_dir = tmp_path / "site", tmp_path / "run"
    run_dir.mkdir()
    write_site(site, [SMALL, WITH_UNKNOWN, FULL, ONLY_UNKNOWN])
    port = free_port()
    conf = tmp_path / "nginx.conf"
    conf.write_text(nginx_conf(port, site, run_dir))
    proc = subprocess.Popen(
        nginx_argv(conf, run_dir, NGINX), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_until_listening(proc, port, run_dir)
        yield Nginx(port, run_dir)
    finally:
        proc.terminate()  # SIGTERM to the master (daemon off): fast shutdown of all workers
        try:
            proc.wait(timeout=BOUND)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=BOUND)


def videos(ids_param: str) -> str:
    return f"/youtube/v3/videos?part=statistics&id={ids_param}"


def test_groups_are_served_byte_for_byte_like_the_python_double(nginx: Nginx) -> None:
    for group in (SMALL, WITH_UNKNOWN, FULL, ONLY_UNKNOWN):
        status, content_type, body = nginx.get(videos(",".join(group)))

        assert status == 200
        assert content_type == "application/json"
        assert body == render_videos_list(group)


def test_percent_encoded_commas_are_served_too(nginx: Nginx) -> None:
    for group in (SMALL, FULL):
        status, _, body = nginx.get(videos("%2C".join(group)))

        assert status == 200
        assert body == render_videos_list(group)


def test_unrendered_groups_and_odd_values_get_empty_items(nginx: Nginx) -> None:
    empty = render_videos_list([])
    for path in (
        videos(",".join(reversed(SMALL))),  # not pre-rendered in this order
        videos("Xnever"),
        videos("../empty"),
        "/youtube/v3/videos?part=statistics",
    ):
        status, content_type, body = nginx.get(path)

        assert (status, content_type, body) == (200, "application/json", empty), path


def test_healthz_and_unknown_paths(nginx: Nginx) -> None:
    assert nginx.get("/healthz")[::2] == (200, b"ok")
    assert nginx.get("/videos/" + ",".join(SMALL) + ".json")[0] == 404


def test_site_layout(tmp_path: Path) -> None:
    write_site(tmp_path, [SMALL, FULL, []])

    assert (tmp_path / "empty.json").read_bytes() == render_videos_list([])
    assert (tmp_path / "videos" / (",".join(SMALL) + ".json")).read_bytes() == render_videos_list(SMALL)
    assert (tmp_path / "videos" / ("%2C".join(SMALL) + ".json")).exists()
    key = ",".join(FULL)
    pieces = [key[i : i + KEY_PIECE_CHARS] for i in range(0, len(key), KEY_PIECE_CHARS)]
    assert len(pieces) > 1
    assert (tmp_path / "videos" / Path(*pieces[:-1]) / f"{pieces[-1]}.json").exists()
    with pytest.raises(ValueError, match="not"):
        write_site(tmp_path, [["ok", "../bad"]])


def test_server_block_is_a_template() -> None:
    block = server_block()

    assert "listen 127.0.0.1:${NGINX_PORT};" in block
    assert "root /usr/share/nginx/html;" in block
    assert "location = /youtube/v3/videos" in block
    assert "location = /healthz" in block
