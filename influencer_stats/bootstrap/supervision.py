"""Several worker processes: where they come from, when a slice installed them (the core runs one).

The core serves ONE process. Several on one port under a supervising parent (``--workers N`` on
the uvicorn and aiohttp runners) are the ``workers`` slice's (``bootstrap/slices/workers.py``),
which fills this record with the modules that do it, named as ``bootstrap.servers`` names a
server's room (imported only when used: the servers sit above this floor). The runners and
``influencer_stats.asgi`` ask the record (``serving.supervised``), never a slice by name:

- ``supervisor``: the module whose ``supervise(settings, target)`` runs ``target`` in
  ``settings.workers`` spawned processes; None: ``--workers`` above 1 is refused at start-up
  (exit 2, one line saying what is missing). Granian forks its own workers and asks nothing.
- ``uvicorn_children``: the module that makes ``uvicorn influencer_stats.asgi:app --workers N``
  (or ``--reload``) say things once and end on a refusal (``says_why``, ``warns``,
  ``announce_once``, ``end_the_supervisor``); None: each of uvicorn's children is on its own.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class Supervision:
    """The modules that run several worker processes, filled by the slice that has them."""

    supervisor: str | None = None
    uvicorn_children: str | None = None
    #: What the slice is, in a line: the start-up error names it when it is missing.
    what: str = "several worker processes on one port under a supervising parent"

    def missing(self, workers: int) -> str | None:
        """Why ``workers`` processes cannot be served here (one line), or None."""
        if workers == 1 or self.supervisor is not None:
            return None
        return (
            f"--workers {workers}: this build serves one process; {self.what} is the workers "
            "slice, which is not installed (run with --workers 1, or install the slice: "
            "influencer_stats/bootstrap/slices/__init__.py, ARCHITECTURE.md)"
        )


#: Filled by the ``workers`` slice when it is installed; empty in the core.
SUPERVISION = Supervision()
