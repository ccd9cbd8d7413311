"""Every setting, declared once: name, variable, type, default, bounds, one line of doc.

A ``Settings`` field is declared with one of the helpers of ``setting_kinds``;
parsing, validation (exit 2 naming the variable), ``--help``,
``--print-settings`` and the settings table all read these declarations.
Interpreters take their values from a ``Settings`` through the composition
root, as required parameters: no default is written twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Final

from influencer_stats.setting_kinds import Spec, integer, one_of, optional_text, seconds
from influencer_stats.settings.service import ServiceSettings

#: What the service's own variables start with (``Slot.env`` builds each slot's from it).
PREFIX: Final = "INFLUENCER_STATS_"


@dataclass(frozen=True, slots=True)
class Settings(ServiceSettings):
    """Everything the composition root needs, resolved and validated: ``ServiceSettings`` and how
    the servers listen and defend themselves (below; declared in this order in every table)."""

    keepalive_s: float = seconds(
        "INFLUENCER_STATS_KEEPALIVE", 5.0, "idle keep-alive connections close after this"
    )
    graceful_shutdown_s: float = seconds(
        "INFLUENCER_STATS_GRACEFUL_SHUTDOWN",
        10.0,
        "on SIGTERM, in-flight requests get this long",
        low=1,  # uvicorn and Granian take whole seconds; Granian's 0 would wait for its workers forever
    )
    header_timeout_s: float = seconds(
        "INFLUENCER_STATS_HEADER_TIMEOUT", 10.0, "a request's headers must arrive within this (slowloris)"
    )
    body_timeout_s: float = seconds(
        "INFLUENCER_STATS_BODY_TIMEOUT", 30.0, "a request's body must arrive within this after its headers"
    )
    max_header_bytes: int = integer(
        "INFLUENCER_STATS_MAX_HEADER_BYTES",
        16_384,
        "request line and headers together, at most (431 beyond)",
        high=1_048_576,  # as much as a whole body
    )
    max_headers: int = integer(
        "INFLUENCER_STATS_MAX_HEADERS", 100, "header fields per request, at most (431 beyond)", high=1_000
    )
    max_pipelined: int = integer(
        "INFLUENCER_STATS_MAX_PIPELINED",
        16,
        "uvicorn: requests queued per connection behind the one answered (reading pauses beyond)",
    )
    send_timeout_s: float = seconds(
        "INFLUENCER_STATS_SEND_TIMEOUT", 30.0, "uvicorn: a client that reads nothing for this long is cut off"
    )
    limit_concurrency: int = integer(
        "INFLUENCER_STATS_LIMIT_CONCURRENCY", 1024, "uvicorn: connections/tasks before an immediate 503"
    )
    backlog: int = integer(
        "INFLUENCER_STATS_BACKLOG",
        2048,
        "the OS accept queue",
        high=65_535,  # the kernel caps it at net.core.somaxconn anyway
    )
    granian_tasks: str = one_of(
        "INFLUENCER_STATS_GRANIAN_TASKS",
        "asyncio",
        "Granian's task implementation (rust: faster, keeps memory per request body read)",
        ("rust", "asyncio"),
    )
    prometheus_multiproc_dir: str | None = optional_text(
        "PROMETHEUS_MULTIPROC_DIR", "with several workers: an empty directory they share for metrics"
    )

    def conflict(self) -> str | None:
        """What makes these settings contradict each other, or None."""
        if self.redis_sentinels and self.redis_cluster:
            return "INFLUENCER_STATS_REDIS_SENTINELS and INFLUENCER_STATS_REDIS_CLUSTER name two topologies: set one"
        if self.history_keep_days < self.history_raw_days:
            return (
                "INFLUENCER_STATS_HISTORY_KEEP_DAYS is shorter than INFLUENCER_STATS_HISTORY_RAW_DAYS:"
                " nothing would be kept one a day"
            )
        return None

    def secrets(self) -> list[str]:
        """Values no log line may contain."""
        from urllib.parse import urlsplit

        found = [s.value for s in (self.youtube_api_key, self.write_token) if s is not None]
        password = urlsplit(self.redis_url.value).password
        return [*found, password] if password else found


def declared() -> Mapping[str, Spec]:
    """Every declared setting by field name, in declaration order."""
    return {f.name: f.metadata["spec"] for f in fields(Settings) if "spec" in f.metadata}


def default_of(name: str) -> object:
    """The declared default of one setting."""
    return next(f.default for f in fields(Settings) if f.name == name)
