"""The YouTube double the profiles call: nginx serving pre-rendered answers, or the Python double.

nginx answers only the id groups rendered ahead of time
(:mod:`youtube_double.nginx_double`), so :func:`id_groups` derives,
from a profile's video client, exactly the ``videos.list`` calls it will make
for a collection: one per distinct id for per-video clients, chunks of 50
distinct ids in order for ``*-batched`` ones, none for the offline ``fake``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from influencer_stats.interpreters.youtube.youtube_api import MAX_IDS_PER_CALL
from perf.procs import HOST, PYTHON, free_port, running, wait_until_ok
from youtube_double import VIDEOS_PATH
from youtube_double.nginx_double import nginx_argv, nginx_conf, write_site

NGINX: Final = "/usr/sbin/nginx"
OFFLINE_CLIENTS: Final = frozenset({"fake"})


def id_groups(video_client: str, ids: Sequence[str]) -> list[tuple[str, ...]]:
    """The id groups ``video_client`` asks videos.list for, for a collection of ``ids``."""
    if video_client in OFFLINE_CLIENTS:
        return []
    distinct = list(dict.fromkeys(ids))
    step = MAX_IDS_PER_CALL if video_client.endswith("-batched") else 1
    return [tuple(distinct[i : i + step]) for i in range(0, len(distinct), step)]


@dataclass(frozen=True, slots=True)
class Double:
    """A running videos.list double."""

    kind: Literal["nginx", "python"]
    port: int
    pid: int
    groups: int
    note: str

    @property
    def base_url(self) -> str:
        """Where it listens (the Python double's ``/_control/...`` routes are under it)."""
        return f"http://{HOST}:{self.port}"

    @property
    def url(self) -> str:
        """The base URL the service's ``YOUTUBE_API_URL`` is set to."""
        return self.base_url + VIDEOS_PATH


def nginx_available(nginx: str = NGINX) -> bool:
    return os.access(nginx, os.X_OK)


@contextmanager
def _serving(
    kind: Literal["nginx", "python"], argv: Sequence[str], port: int, log: Path, groups: int, note: str
) -> Iterator[Double]:
    with running(argv, log) as process:
        wait_until_ok(port, "/healthz", process, log, timeout_s=20.0)
        yield Double(kind=kind, port=port, pid=process.pid, groups=groups, note=note)


def python_double(
    work_dir: Path, *, groups: int = 0, note: str = "the Python double (aiohttp)", latency_ms: int = 0
) -> AbstractContextManager[Double]:
    """The Python double on a free port: it answers any ids (each call ``latency_ms`` late), and
    has switchable faults (``/_control/fault``)."""
    port = free_port()
    argv = [PYTHON, "-m", "youtube_double", "--host", HOST, "--port", str(port)]
    argv += ["--latency-ms", str(latency_ms)]
    log = work_dir / f"youtube-double-{port}.log"
    return _serving("python", argv, port, log, groups, note)


def youtube_double(
    work_dir: Path, groups: Iterable[Sequence[str]], *, nginx: str = NGINX
) -> AbstractContextManager[Double]:
    """Run the nginx double on a free port with ``groups`` pre-rendered, or the Python one without nginx."""
    unique = list(dict.fromkeys(tuple(g) for g in groups if g))
    if not nginx_available(nginx):
        note = (
            f"the Python double (aiohttp; {nginx} not found): it computes every answer and "
            "shares the 2 cores with the service, so upstream-bound profiles look slower than with nginx"
        )
        return python_double(work_dir, groups=len(unique), note=note)
    port = free_port()
    site, run_dir = work_dir / "nginx-site", work_dir / "nginx-run"
    run_dir.mkdir(parents=True, exist_ok=True)
    write_site(site, unique)
    conf = run_dir / "nginx.conf"
    conf.write_text(nginx_conf(port, site, run_dir))
    note = f"nginx ({nginx}, 1 worker) serving {len(unique)} pre-rendered id groups"
    return _serving(
        "nginx", nginx_argv(conf, run_dir, nginx), port, work_dir / "youtube-double.log", len(unique), note
    )
