"""Joint ``prometheus__workers``: ``--workers N`` as the Prometheus metrics see it, summed over workers.

The ``prometheus`` slice's and the ``workers`` slice's only together (``slice.Joint``): its suites
start several workers under the supervisor and read the snapshots they write, so it goes with
either slice. It registers nothing: the metrics of several workers are the ``prometheus`` entry's.
"""

from __future__ import annotations

from influencer_stats.bootstrap.slices.slice import Joint

JOINT = Joint(
    ("prometheus", "workers"),
    "the Prometheus metrics of several worker processes, each worker's snapshot summed",
    files=("tests/integration/test_prometheus_workers.py",),
    modules=(
        "influencer_stats.bootstrap.slices.prometheus__workers",
        "tests.integration.test_prometheus_workers",
    ),
)
