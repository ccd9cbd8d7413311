"""Slice ``granian_server``: Granian, a Rust HTTP server, through RSGI (``--server granian``).

Its room is ``servers/granian`` (the RSGI app around ``HttpApi``, Granian's runner, the
``SERVER`` record), and the lifeline of its workers it shares with the ``workers`` slice
(``slice.LIFELINE``): Granian forks its workers itself, even one, and needs no supervisor. The
profiles that name it (``v5``, ``fast``) are offered only while it is installed
(``config.resolve.offered``); the cross-server suites take it from the registry.
"""

from __future__ import annotations

from influencer_stats.bootstrap.servers import SERVERS
from influencer_stats.bootstrap.slices.slice import LIFELINE, Slice

SLICE = Slice(
    "granian_server",
    "Granian, a Rust HTTP server, through RSGI",
    files=(
        "influencer_stats/servers/granian",
        "tests/unit/test_granian_references.py",
        "tests/integration/test_granian_tasks.py",
        "tests/integration/test_perf_per_request.py",
    ),
    modules=("influencer_stats.servers.granian",),
    shared=LIFELINE,  # its workers end with it, even one (with the workers slice's supervisor)
)

SERVERS.register("granian", "influencer_stats.servers.granian", "Granian, a Rust HTTP server, through RSGI")
