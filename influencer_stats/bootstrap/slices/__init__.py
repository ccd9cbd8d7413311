"""The service's slices: every optional feature, one line each in ``INSTALLED`` below.

The *core* is the skeleton (ARCHITECTURE.md, "The core and its slices"): the algebras, the use
case, the domain, the settings and config, the registries and the root, the edge, one server,
the stores, clients and loggers every profile can run on. A *slice* is a feature the core runs
without: its modules in each layer folder (named for it), its registry entries, tests and docs,
and one module here that registers its entries and declares its files (``SLICE``). Shared code
knows a slice only through what its entries declare, never by its name.

To remove a slice, delete the files its ``SLICE`` declares (this module's file among them) and
its line below; ``python scripts/slices.py files NAME`` lists them, ``make slices`` proves each
can go alone and all together (ruff, mypy, lint-imports, the unit and contract suites on what is
left). To add one, see ARCHITECTURE.md, "Add a slice".
"""

from __future__ import annotations

from importlib import import_module
from typing import Final, cast

from influencer_stats.bootstrap.slices.slice import Slice

#: Every slice of the service, as a Django project lists its INSTALLED_APPS: one line each.
INSTALLED: Final[tuple[str, ...]] = (
    # "name",  # what it adds: this line and the files its module declares are the slice
    "aiohttp_server",  # aiohttp.web as a server, beside Starlette
    "asgi_server",  # a hand-routed ASGI app on uvicorn, beside Starlette
    "batching",  # up to 50 ids a videos.list call: the *-batched clients, the batch wrapper
    "granian_server",  # Granian (Rust) through RSGI, the server of v5 and fast
    "history",  # snapshots of each collection's stats: /history, /history.svg, /growth
    "httpx_clients",  # the YouTube clients over httpx (--video-client httpx; httpx-batched with batching)
    "prometheus",  # /metrics in Prometheus's text format, summed over workers (--metrics prometheus)
    "quota",  # the day's budget of YouTube units, never overspent (--quota memory|redis)
    "sources",  # collections read from a playlist or channel, kept and refreshed (PUT, GET, refresh)
    "stats_cache",  # the stats caches: in process, in Redis, near (--cache stats, redis, near)
    "tracing",  # OpenTelemetry spans over OTLP/HTTP (--tracing otel)
    "video_cache",  # a per-video cache around the video client (--video-cache memory|redis)
)


def load() -> tuple[Slice, ...]:
    """Import every installed slice (its entries join their registries); its declarations, in order."""
    return tuple(_declared(import_module(f"{__name__}.{name}"), name) for name in INSTALLED)


def _declared(module: object, name: str) -> Slice:
    found = getattr(module, "SLICE", None)
    if getattr(found, "name", None) != name:
        raise TypeError(f"{__name__}.{name} must declare SLICE = Slice({name!r}, ...)")
    return cast(Slice, found)
