"""Algebras: the small Protocols the logic is written against.

Each is named by role and documents its contract; interpreters satisfy them
structurally (no inheritance), and mypy checks conformance in the
composition root.
"""

from influencer_stats.algebras.collections import CollectionStore
from influencer_stats.algebras.event_log import LOG_CONTEXT, EventLog
from influencer_stats.algebras.metrics import Metrics
from influencer_stats.algebras.stats import CollectionStatsQuery
from influencer_stats.algebras.videos import VideoStatsSource

__all__ = [
    "LOG_CONTEXT",
    "CollectionStatsQuery",
    "CollectionStore",
    "EventLog",
    "Metrics",
    "VideoStatsSource",
]
