"""Joint ``redis__tracing``: Redis commands as spans of the request that sent them.

The ``redis`` slice's and the ``tracing`` slice's only together (``slice.Joint``): loaded while
both are installed, removed with either. It registers nothing (the client is traced through the
core's ``Tracing.redis``, which the ``otel`` entry fills); it holds the suite that proves it.
"""

from __future__ import annotations

from influencer_stats.bootstrap.slices.slice import Joint

JOINT = Joint(
    ("redis", "tracing"),
    "Redis commands as spans of the request that sent them (--tracing otel with a Redis choice)",
    files=("tests/integration/test_tracing_redis.py",),
    modules=("influencer_stats.bootstrap.slices.redis__tracing",),
)
