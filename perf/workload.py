"""What the service holds and what wrk asks for.

The original's load test seeded 250 empty collections and one collection of
three videos, then hammered that one's ``/stats``. The empties go in first,
so the v1 list store walks all 250 of them on every lookup, as the
original's linked list did. ``--collection 1000|5000|10000`` targets one
collection of that many synthetic videos instead.
"""

from __future__ import annotations

import http.client
import json
import uuid
from dataclasses import dataclass
from typing import Final

from influencer_stats.domain.validation import DEFAULT_MAX_VIDEOS
from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from perf.procs import HOST, LabError

ORIGINAL_COLLECTION: Final = "99757a95-f758-499f-a170-bea93b2d8bcf"
ORIGINAL_VIDEOS: Final = ("-4lB5EKS5Uk", "-jlLkTtgWUk", "1FEFpk-uIYo")
EMPTY_COLLECTIONS: Final = 250
COLLECTION_CHOICES: Final = ("original", "1000", "5000", "10000")
_EMPTY_NAMESPACE: Final = uuid.UUID("6f1c1f8e-5b0a-4b53-9d0c-6b7f2c1a9e01")


@dataclass(frozen=True, slots=True)
class Workload:
    """The collections to seed and the one whose stats wrk requests."""

    name: str
    target: str
    videos: tuple[str, ...]
    empties: tuple[str, ...]

    @property
    def stats_path(self) -> str:
        return f"/collections/{self.target}/stats"

    @property
    def service_env(self) -> dict[str, str]:
        """The service's limit of ids per collection is raised only when this collection needs it."""
        if len(self.videos) <= DEFAULT_MAX_VIDEOS:
            return {}
        return {"INFLUENCER_STATS_MAX_VIDEOS": str(len(self.videos))}

    def describe(self) -> str:
        raised = (
            f" (the service runs with INFLUENCER_STATS_MAX_VIDEOS={len(self.videos)}; "
            f"the default limit is {DEFAULT_MAX_VIDEOS:,})"
            if self.service_env
            else ""
        )
        return (
            f"{len(self.empties)} empty collections, then `{self.target}` with "
            f"{len(self.videos):,} videos{raised}; wrk requests `GET {self.stats_path}`"
        )


def workload(name: str) -> Workload:
    """``original`` (the talk's 3 videos) or ``1000``/``5000``/``10000`` synthetic videos."""
    empties = tuple(str(uuid.uuid5(_EMPTY_NAMESPACE, str(i))) for i in range(EMPTY_COLLECTIONS))
    if name == "original":
        return Workload(name, ORIGINAL_COLLECTION, ORIGINAL_VIDEOS, empties)
    if name not in COLLECTION_CHOICES:
        raise LabError(f"unknown collection {name!r}; valid: {', '.join(COLLECTION_CHOICES)}")
    size = int(name)
    videos = tuple(synthetic_video_id(n) for n in range(size))
    return Workload(name, f"perf-synthetic-{size}", videos, empties)


def seed(port: int, load: Workload, timeout_s: float = 30.0) -> None:
    """PUT every collection over one keep-alive connection; raises LabError on any non-2xx."""
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout_s)
    try:
        for collection, videos in [*((e, ()) for e in load.empties), (load.target, load.videos)]:
            body = json.dumps({"videos": list(videos)}).encode()
            conn.request("PUT", f"/collections/{collection}", body, {"content-type": "application/json"})
            response = conn.getresponse()
            answer = response.read()
            if not 200 <= response.status < 300:
                raise LabError(f"PUT /collections/{collection}: {response.status} {answer[:300]!r}")
    finally:
        conn.close()


def check_stats(port: int, load: Workload, timeout_s: float = 30.0) -> str | None:
    """One stats request before the load, to catch a double that does not serve what the client asks.

    A 200 that counts fewer videos than the collection has means exactly that:
    LabError. Any other status is the service's answer under this workload (a
    per-video client may not fetch 1,000 videos within the upstream deadline),
    so it is measured anyway and returned as a note.
    """
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout_s)
    try:
        conn.request("GET", load.stats_path)
        response = conn.getresponse()
        body = response.read()
    finally:
        conn.close()
    if response.status != 200:
        return f"the first GET {load.stats_path} answered {response.status}: {body[:300].decode(errors='replace')}"
    answer = json.loads(body)
    if answer.get("missing") or answer.get("videos") != len(set(load.videos)):
        raise LabError(
            f"GET {load.stats_path} counted {answer.get('videos')} of {len(set(load.videos))} videos, "
            f"missing {len(answer.get('missing') or [])}: the double does not serve what the client asks"
        )
    return None
