"""Slice ``workers``: several worker processes on one port under a supervising parent (``--workers N``).

Without it the core serves one process: the uvicorn and aiohttp runners ask ``supervise``
(``serving.supervised``) for more, which refuses ``--workers`` above 1 in one line, exit 2, naming
what is missing (``bootstrap.supervision``). With it, that record names:

- the supervisor (``serving/workers.py``): each worker a spawned process binding the port with
  ``SO_REUSEPORT``, the parent announcing, forwarding the stopping signals, watching each
  worker's heartbeat and stopping the service when one dies or hangs;
- what makes uvicorn's own supervisors, ``uvicorn influencer_stats.asgi:app --workers N`` or
  ``--reload``, say things once and end on a refusal (``serving/uvicorn_supervisors.py``).

The lifeline (``serving/lifeline.py``: workers that end with their parent, the heartbeat watch)
is shared with ``granian_server``, whose Granian forks even one worker (``slice.LIFELINE``).
Granian's several workers are its own: they need nothing of this slice.
"""

from __future__ import annotations

from influencer_stats.bootstrap.slices.slice import LIFELINE, Slice
from influencer_stats.bootstrap.supervision import SUPERVISION

SLICE = Slice(
    "workers",
    "several worker processes on one port under a supervising parent (--workers N)",
    files=(
        "influencer_stats/serving/workers.py",
        "influencer_stats/serving/uvicorn_supervisors.py",
        "tests/integration/test_workers*.py",
        "tests/integration/test_worker_lifeline.py",
    ),
    modules=(
        "influencer_stats.serving.workers",
        "influencer_stats.serving.uvicorn_supervisors",
        "influencer_stats.bootstrap.slices.workers",
    ),
    shared=LIFELINE,
)

SUPERVISION.supervisor = "influencer_stats.serving.workers"
SUPERVISION.uvicorn_children = "influencer_stats.serving.uvicorn_supervisors"
