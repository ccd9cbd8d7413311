"""Every setting, declared once: name, variable, type, default, bounds, one line of doc.

A ``Settings`` field is declared with one of the helpers of ``setting_kinds``;
parsing, validation (exit 2 naming the variable), ``--help``,
``--print-settings`` and the settings table all read these declarations.
Interpreters take their values from a ``Settings`` through the composition
root, as required parameters: no default is written twice.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from typing import Final

from influencer_stats.domain.quota import YOUTUBE_DAY_S
from influencer_stats.domain.validation import DEFAULT_MAX_VIDEOS, MAX_VIDEOS_BOUND
from influencer_stats.setting_kinds import (
    LOG_LEVELS,
    Secret,
    Spec,
    addresses,
    integer,
    one_of,
    optional_text,
    seconds,
    secret,
    text,
    url,
)

#: What the service's own variables start with (``Slot.env`` builds each slot's from it).
PREFIX: Final = "INFLUENCER_STATS_"
_FILL_DOC = "batching: ms a call not full waits to fill among other requests or a busy call gate (0 = none)"


@dataclass(frozen=True, slots=True)
class Choices(Mapping[str, tuple[str, ...]]):
    """The chosen names per slot: one name for a base slot, the wrappers for a wrapper slot."""

    names: Mapping[str, tuple[str, ...]]

    def __getitem__(self, slot: str) -> tuple[str, ...]:
        return self.names[slot]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def one(self, slot: str) -> str:
        """The name chosen for a base slot."""
        (name,) = self.names[slot]
        return name

    def text(self, slot: str) -> str:
        """As a user writes it: ``aiohttp``, ``breaker,rate-limit`` or ``none``."""
        return ",".join(self.names[slot]) or "none"


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the composition root needs, resolved and validated."""

    choices: Choices
    profile: str = text(
        "INFLUENCER_STATS_PROFILE", "demo", "profile: a named bundle of choices", flag="--profile"
    )
    host: str = text("INFLUENCER_STATS_HOST", "127.0.0.1", "bind address", flag="--host")
    port: int = integer("INFLUENCER_STATS_PORT", 8080, "bind port", high=65535, flag="--port")
    workers: int = integer(
        "INFLUENCER_STATS_WORKERS",
        1,
        "worker processes sharing the port (state kept per process refuses more than 1)",
        high=256,
        flag="--workers",
    )
    worker_timeout_s: float = seconds(
        "INFLUENCER_STATS_WORKER_TIMEOUT",
        10.0,
        "a worker whose event loop does not beat for this long is killed and the service stops",
        low=1,  # below, scheduling jitter on a busy machine could pass for a hang
    )
    youtube_api_url: str = url(
        "YOUTUBE_API_URL",
        "https://www.googleapis.com/youtube/v3/videos",
        "any videos.list-compatible server (config only, never user-derived)",
        schemes=("http", "https"),
    )
    youtube_api_key: Secret | None = secret(
        "YOUTUBE_API_KEY", "sent as X-Goog-Api-Key, never in a URL, never logged"
    )
    db_path: str = text(
        "INFLUENCER_STATS_DB", "data/influencer-stats.sqlite3", "the SQLite file; its directory is created"
    )
    redis_url: Secret = url(
        "REDIS_URL",
        "redis://127.0.0.1:6379/0",
        "for the redis store and cache (may carry a password: never printed)",
        schemes=("redis", "rediss", "unix"),
        secret=True,
    )
    redis_sentinels: tuple[tuple[str, int], ...] | None = addresses(
        "INFLUENCER_STATS_REDIS_SENTINELS",
        "host:port,… of Redis Sentinels: the primary they name INFLUENCER_STATS_REDIS_MASTER is used, "
        "followed through failovers (REDIS_URL then gives only its password, user, database and TLS)",
    )
    redis_master: str = text(
        "INFLUENCER_STATS_REDIS_MASTER", "mymaster", "with Sentinels: the name they monitor the primary by"
    )
    redis_cluster: tuple[tuple[str, int], ...] | None = addresses(
        "INFLUENCER_STATS_REDIS_CLUSTER",
        "host:port,… of Redis Cluster nodes to discover the rest from "
        "(REDIS_URL then gives only its password, user and TLS)",
    )
    redis_wait_replicas: int = integer(
        "INFLUENCER_STATS_REDIS_WAIT_REPLICAS",
        0,
        "a collection write is acknowledged once this many replicas have it (WAIT, up to half "
        "of INFLUENCER_STATS_REDIS_TIMEOUT), else it answers 503, and /readyz fails (redis-replicas) "
        "while fewer are online; 0: once the primary has it",
        low=0,
        high=16,
    )
    redis_prefix: str = text(
        "INFLUENCER_STATS_REDIS_PREFIX",
        "is",
        "prefix of every Redis key (deployments sharing a Redis differ here)",
    )
    write_token: Secret | None = secret(
        "INFLUENCER_STATS_WRITE_TOKEN", "when set, PUT/DELETE need Authorization: Bearer <token>"
    )
    max_videos: int = integer(
        "INFLUENCER_STATS_MAX_VIDEOS",
        DEFAULT_MAX_VIDEOS,
        "ids per collection (a 1 MiB body holds no more than the maximum)",
        high=MAX_VIDEOS_BOUND,
    )
    log_level: str = one_of(
        "INFLUENCER_STATS_LOG_LEVEL",
        "debug",
        "the least severe events written (every logger and log wrapper; uvicorn's own stay at warning)",
        LOG_LEVELS,
    )
    log_rate_limit: int = integer(
        "INFLUENCER_STATS_LOG_RATE_LIMIT", 1_000, "events per second the rate-limit log wrapper lets through"
    )
    upstream_call_timeout_s: float = seconds("INFLUENCER_STATS_UPSTREAM_TIMEOUT", 1.0, "per YouTube call")
    upstream_deadline_s: float = seconds(
        "INFLUENCER_STATS_UPSTREAM_DEADLINE",
        2.0,
        "a stats request waits this long for YouTube, retries included (with a video cache its calls go on)",
    )
    import_deadline_s: float = seconds(
        "INFLUENCER_STATS_IMPORT_DEADLINE",
        30.0,
        "a PUT or refresh from a playlist or channel waits this long for YouTube, every page included",
    )
    upstream_concurrency: int = integer(
        "INFLUENCER_STATS_UPSTREAM_CONCURRENCY", 16, "YouTube calls in flight per stats request"
    )
    upstream_connections: int = integer(
        "INFLUENCER_STATS_UPSTREAM_CONNECTIONS",
        64,
        "YouTube connection pool per process (the request with the fewest calls waiting goes next)",
    )
    upstream_queue: int = integer(
        "INFLUENCER_STATS_UPSTREAM_QUEUE",
        2_048,
        "YouTube calls waiting for a connection per process, at most (503 upstream-busy beyond)",
        low=0,
    )
    upstream_retries: int = integer(
        "INFLUENCER_STATS_UPSTREAM_RETRIES",
        2,
        "retries of a transient YouTube failure (5xx, 429)",
        low=0,
        high=100,  # the backoff doubles per attempt: a float no longer holds it past ~1,000
    )
    breaker_threshold: int = integer(
        "INFLUENCER_STATS_BREAKER_THRESHOLD", 5, "consecutive failed fetches that open the circuit"
    )
    breaker_cooldown_s: float = seconds(
        "INFLUENCER_STATS_BREAKER_COOLDOWN", 5.0, "how long the circuit stays open"
    )
    cache_ttl_s: float = seconds("INFLUENCER_STATS_CACHE_TTL", 10.0, "stats cache: fresh for this long")
    cache_stale_while_revalidate_s: float = seconds(
        "INFLUENCER_STATS_CACHE_SWR", 30.0, "stats cache: then served stale while one refresh runs"
    )
    cache_stale_if_error_s: float = seconds(
        "INFLUENCER_STATS_CACHE_SIE", 300.0, "stats cache: served past fresh when YouTube fails"
    )
    cache_max_entries: int = integer(
        "INFLUENCER_STATS_CACHE_MAX_ENTRIES", 10_000, "stats cache: collections kept (LRU)"
    )
    video_ttl_s: float = seconds(
        "INFLUENCER_STATS_VIDEO_TTL",
        300.0,
        "video cache: a video's counters are fresh for this long (quota: see docs/quota.md)",
    )
    snapshot_interval_s: int = integer(
        "INFLUENCER_STATS_SNAPSHOT_INTERVAL",
        0,
        "stats history: seconds between snapshots of every collection (0: none; youtube, distributed: 3600)",
        low=0,
        high=604_800,  # a week
    )
    source_refresh_interval_s: int = integer(
        "INFLUENCER_STATS_SOURCE_REFRESH_INTERVAL",
        0,
        "collections read from a playlist or channel: seconds between re-reads of it "
        "(0: only POST /collections/{id}/refresh; youtube, distributed: 86400)",
        low=0,
        high=2_592_000,  # 30 days
    )
    refresh_min_interval_s: int = integer(
        "INFLUENCER_STATS_REFRESH_MIN_INTERVAL",
        60,
        "POST /collections/{id}/refresh of a source read less than this many seconds ago (in this "
        "process) answers 429 with Retry-After, reading nothing (0: never)",
        low=0,
        high=86_400,
    )
    history_raw_days: int = integer(
        "INFLUENCER_STATS_HISTORY_RAW_DAYS",
        30,
        "stats history: every snapshot is kept this many days",
        high=3_650,
    )
    history_keep_days: int = integer(
        "INFLUENCER_STATS_HISTORY_KEEP_DAYS",
        400,
        "stats history: then one a day, until this many days old",
        high=3_650,
    )
    history_query_timeout_s: float = seconds(
        "INFLUENCER_STATS_HISTORY_QUERY_TIMEOUT",
        10.0,
        "stats history: a /history or /growth query still running after this is stopped (a 503)",
    )
    video_cache_max_entries: int = integer(
        "INFLUENCER_STATS_VIDEO_CACHE_MAX_ENTRIES", 100_000, "video cache: videos kept in process (LRU)"
    )
    batch_window_ms: int = integer(
        "INFLUENCER_STATS_BATCH_WINDOW_MS",
        2,
        "batching: ids due within this many ms share videos.list calls (0 = off)",
        low=0,
        high=1_000,
    )
    batch_fill_ms: int = integer("INFLUENCER_STATS_BATCH_FILL_MS", 100, _FILL_DOC, low=0, high=1_000)
    quota_per_day: int = integer(
        "INFLUENCER_STATS_QUOTA_PER_DAY",
        10_000,
        "YouTube units (videos.list calls) this deployment may spend per quota day (0 = no limit)",
        low=0,
    )
    share: str = text("INFLUENCER_STATS_SHARE", "1000/hour", "units a client may spend: 1000/hour;3000/day")
    share_proxies: int = integer("INFLUENCER_STATS_SHARE_PROXIES", 0, "X-Forwarded-For hops trusted", low=0)
    quota_day_s: int = integer(
        "INFLUENCER_STATS_QUOTA_DAY",
        YOUTUBE_DAY_S,
        f"length of a quota day in s; {YOUTUBE_DAY_S:,} resets at midnight Pacific, shorter only for trials",
        low=1,
        high=YOUTUBE_DAY_S,
    )
    redis_timeout_s: float = seconds(
        "INFLUENCER_STATS_REDIS_TIMEOUT", 0.5, "every Redis call (sent again only if none of it was sent)"
    )
    redis_connections: int = integer("INFLUENCER_STATS_REDIS_CONNECTIONS", 64, "Redis pool size per process")
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
