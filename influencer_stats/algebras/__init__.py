"""Algebras: every Protocol of the service, each named by role with its contract.

The ones the logic is written against are re-exported here. The parts the
YouTube source and the per-video cache are built of are algebras too, with
interpreters of their own (this process, or Redis): ``youtube.VideosListCall``,
``quota.QuotaLedger``, and the per-video cache's ``VideoEntries``, ``StaleQueue``
and ``MissClaims`` (its slice's module); import those from their modules. Interpreters satisfy them
structurally (no inheritance), and mypy checks conformance in the composition
root.
"""

from influencer_stats.algebras.collections import CollectionStore
from influencer_stats.algebras.event_log import LOG_CONTEXT, EventLog
from influencer_stats.algebras.metrics import (
    AllMetrics,
    CacheMetrics,
    Metrics,
    RuntimeMetrics,
    UpstreamMetrics,
)
from influencer_stats.algebras.stats import CollectionStatsQuery
from influencer_stats.algebras.videos import VideoStatsSource

__all__ = [
    "LOG_CONTEXT",
    "AllMetrics",
    "CacheMetrics",
    "CollectionStatsQuery",
    "CollectionStore",
    "EventLog",
    "Metrics",
    "RuntimeMetrics",
    "UpstreamMetrics",
    "VideoStatsSource",
]
