"""The service's slices: every optional feature, one line each in ``INSTALLED`` below.

The *core* is the skeleton (ARCHITECTURE.md, "The core and its slices"): the algebras, the use
case, the domain, the settings and config, the registries and the root, the edge, one server,
the stores, clients and loggers every profile can run on. A *slice* is a feature the core runs
without: its modules in each layer folder (named for it), its registry entries, tests and docs,
and one module here that registers its entries and declares its files (``SLICE``). What two
slices are only together (the history's SQLite entry) is a joint: a module here named for both
(``history__sqlite.py``, declaring ``JOINT``), loaded only while both are installed and removed
with either. Shared code knows a slice only through what its entries declare, never by its name.

To remove a slice, delete the files its ``SLICE`` declares (this module's file among them) and
its line below; ``python scripts/slices.py files NAME`` lists them, ``make slices`` proves each
can go alone and all together (ruff, mypy, lint-imports, the unit and contract suites on what is
left). To add one, see ARCHITECTURE.md, "Add a slice".
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import Final, cast

from influencer_stats.bootstrap.slices.slice import Joint, Slice

#: Every slice of the service, as a Django project lists its INSTALLED_APPS: one line each.
INSTALLED: Final[tuple[str, ...]] = (
    # "name",  # what it adds: this line and the files its module declares are the slice
    "access_log",  # one http.access line per request (INFLUENCER_STATS_ACCESS_LOG=on): first, outermost
    "aiohttp_server",  # aiohttp.web as a server, beside Starlette
    "asgi_server",  # a hand-routed ASGI app on uvicorn, beside Starlette
    "batching",  # up to 50 ids a videos.list call: the *-batched clients, the batch wrapper
    "cors",  # CORS for the origins INFLUENCER_STATS_CORS_ORIGINS allows (preflights, headers)
    "granian_server",  # Granian (Rust) through RSGI, the server of v5 and fast
    "history",  # snapshots of each collection's stats: /history, /history.svg, /growth
    "httpx_clients",  # the YouTube clients over httpx (--video-client httpx; httpx-batched with batching)
    "prometheus",  # /metrics in Prometheus's text format, summed over workers (--metrics prometheus)
    "quota",  # the day's budget of YouTube units, never overspent (--quota memory|redis)
    "shares",  # each client's share of YouTube units, a 429 past it (--shares memory|redis|none)
    "redis",  # the shared Redis client (one server, Sentinel, Cluster) and the store on it (--store redis)
    "sources",  # collections read from a playlist or channel, kept and refreshed (PUT, GET, refresh)
    "sqlite",  # the SQLite database and the durable store on it (--store sqlite, the default store)
    "stats_cache",  # the stats caches: in process, in Redis, near (--cache stats, redis, near)
    "tracing",  # OpenTelemetry spans over OTLP/HTTP (--tracing otel)
    "video_cache",  # a per-video cache around the video client (--video-cache memory|redis)
    "workers",  # several worker processes on one port under a supervising parent (--workers N)
)


def load() -> tuple[Slice, ...]:
    """Import every installed slice (its entries join their registries), then every joint of two
    installed slices (``joints``); the slices' declarations, in order."""
    slices = tuple(_declared(import_module(f"{__name__}.{name}"), name) for name in INSTALLED)
    joints()
    return slices


def joints() -> tuple[Joint, ...]:
    """Import each joint module here whose two slices are both installed (``<a>__<b>.py``: what
    they are only together, ``slice.Joint``); their declarations, by name. One of a slice not
    installed is not imported (its files go with that slice: ``scripts/slices.py``)."""
    found = []
    for path in sorted(Path(__file__).parent.glob("*__*.py")):
        of = tuple(path.stem.split("__"))
        if len(of) != 2 or not all(of) or not set(of) <= set(INSTALLED):
            continue  # __init__.py, or a joint of a slice removed
        joint = getattr(import_module(f"{__name__}.{path.stem}"), "JOINT", None)
        if getattr(joint, "of", None) != of:
            raise TypeError(f"{__name__}.{path.stem} must declare JOINT = Joint({of!r}, ...)")
        found.append(cast(Joint, joint))
    return tuple(found)


def _declared(module: object, name: str) -> Slice:
    found = getattr(module, "SLICE", None)
    if getattr(found, "name", None) != name:
        raise TypeError(f"{__name__}.{name} must declare SLICE = Slice({name!r}, ...)")
    return cast(Slice, found)
