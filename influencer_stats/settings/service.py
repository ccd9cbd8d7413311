"""The service's settings but how its servers listen and defend (``Settings`` adds those):
what it runs, where its data and its dependencies are, and how it spends, caches and logs.
Declared as ``settings`` says; one class split in two only to keep each module one sitting long."""

from __future__ import annotations

from dataclasses import dataclass

from influencer_stats.domain.quota import YOUTUBE_DAY_S
from influencer_stats.domain.validation import DEFAULT_MAX_VIDEOS, MAX_VIDEOS_BOUND
from influencer_stats.setting_kinds import (
    LOG_LEVELS,
    Choices,
    Secret,
    addresses,
    integer,
    one_of,
    origins,
    seconds,
    secret,
    text,
    url,
)


@dataclass(frozen=True, slots=True)
class ServiceSettings:
    """What the service runs and with what: every setting but the servers' (``Settings``)."""

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
    fake_growth: int = integer(
        "INFLUENCER_STATS_FAKE_GROWTH",
        1,
        "the fake video client's counts grow this many times their own pace (0.5-5 % of views a day) "
        "from the start, a minute of it at a time (0: they never change; 1440: a day a minute)",
        low=0,
        high=604_800,  # a week a second
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
    access_log: str = one_of(
        "INFLUENCER_STATS_ACCESS_LOG",
        "off",
        "on: one http.access event (info) per request through the logger (the dropping logger's "
        "rate limit applies: what it drops it counts)",
        ("off", "on"),
        flag="--access-log",
    )
    gzip_min_bytes: int = integer(
        "INFLUENCER_STATS_GZIP_MIN_BYTES",
        1024,
        "answers of at least this many bytes are gzipped for clients that accept it; 0: never",
        low=0,
        flag="--gzip-min-bytes",
    )
    cors_origins: str | None = origins(
        "INFLUENCER_STATS_CORS_ORIGINS",
        "browser origins allowed to call the API (CORS), comma-separated, or *; unset: CORS off",
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
    batch_fill_ms: int = integer(
        "INFLUENCER_STATS_BATCH_FILL_MS",
        100,
        "batching: ms a call not full waits to fill among other requests or a busy call gate (0 = none)",
        low=0,
        high=1_000,
    )
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
