"""Joint ``redis__workers``: several workers under one supervisor sharing the Redis store.

The ``redis`` slice's and the ``workers`` slice's only together (``slice.Joint``): loaded while
both are installed, removed with either. It registers nothing (the store declares it keeps
nothing per process, the supervisor starts the workers); it holds the suite that proves the two
agree: ``distributed --workers 2`` reads its writes on either worker.
"""

from __future__ import annotations

from influencer_stats.bootstrap.slices.slice import Joint

JOINT = Joint(
    ("redis", "workers"),
    "several workers under one supervisor sharing the Redis store (distributed --workers 2)",
    files=("tests/integration/test_distributed_workers.py",),
    modules=("influencer_stats.bootstrap.slices.redis__workers",),
)
