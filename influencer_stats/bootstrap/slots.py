"""Every slot of the service, in order: the one list config, CLI, logs and tests read.

Importing it loads the installed slices, so every registry read through ``SLOTS`` is whole, and
the slots a slice declares (``Slice.slots``) follow the core's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from influencer_stats.bootstrap.logs import LOG_WRAPPERS, LOGGERS
from influencer_stats.bootstrap.metrics import METRICS
from influencer_stats.bootstrap.quota import QUOTAS
from influencer_stats.bootstrap.registry import Slot
from influencer_stats.bootstrap.servers import SERVERS
from influencer_stats.bootstrap.slices import load
from influencer_stats.bootstrap.stats import STATS_WRAPPERS
from influencer_stats.bootstrap.stores import STORES
from influencer_stats.bootstrap.tracing import TRACING
from influencer_stats.bootstrap.videos import VIDEO_CACHES, VIDEO_CLIENTS, VIDEO_WRAPPERS

#: The installed slices, their entries now in the registries above (``bootstrap/slices``).
SLICES: Final = load()

SLOTS: Final[Mapping[str, Slot]] = {
    slot.name: slot
    for slot in (
        Slot("server", "the HTTP server", SERVERS),
        Slot("video_client", "where video statistics come from", VIDEO_CLIENTS),
        Slot("store", "where collections live", STORES, default="dict"),
        Slot("logger", "where log events go", LOGGERS),
        Slot("cache", "wrappers of the stats query", STATS_WRAPPERS, default="none", wrappers_of="stats"),
        Slot(
            "video_cache",
            "per-video caches around the video client",
            VIDEO_CACHES,
            default="none",
            wrappers_of="video_client",
        ),
        Slot("quota", "where the units spent today are counted", QUOTAS, default="none"),
        Slot("metrics", "who records /metrics", METRICS, default="none"),
        Slot(
            "video_wrappers",
            "wrappers of the video client",
            VIDEO_WRAPPERS,
            wrappers_of="video_client",
            follows="video_client",
        ),
        Slot(
            "log_wrappers",
            "wrappers of the logger",
            LOG_WRAPPERS,
            wrappers_of="logger",
            follows="logger",
        ),
        Slot(
            "tracing",
            "spans of each request, exported over OTLP (the OTEL_* variables)",
            TRACING,
            default="none",
        ),
        *(slot for installed in SLICES for slot in installed.slots),
    )
}
