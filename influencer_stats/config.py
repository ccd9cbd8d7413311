"""Settings and profiles: which interpreters to run, read from argv and environ.

A profile is a named, declarative bundle of interpreter choices. Every choice
can be overridden one by one (CLI flag, then environment variable, then the
profile). The environment is a parameter, so tests pass a dict.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace

from influencer_stats.logic.validation import DEFAULT_MAX_VIDEOS, MAX_VIDEOS_BOUND

DEFAULT_YOUTUBE_API_URL = "https://www.googleapis.com/youtube/v3/videos"
DEFAULT_DB_PATH = "data/influencer-stats.sqlite3"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"

#: Every implemented choice per slot. Names that later work will add are in
#: ``PLANNED`` so users get "not available yet" instead of "unknown".
CHOICES: Mapping[str, tuple[str, ...]] = {
    "server": ("starlette", "aiohttp", "asgi", "granian"),
    "video_client": ("fake", "httpx", "httpx-batched", "aiohttp", "aiohttp-batched"),
    "store": ("list", "dict", "sqlite", "redis"),
    "logger": ("all", "dropping", "silent"),
    "cache": ("none", "stats", "redis"),
    "metrics": ("prometheus", "none"),
}
PLANNED: Mapping[str, tuple[str, ...]] = {
    "server": (),
    "video_client": (),
    "store": (),
    "logger": (),
    "cache": (),
    "metrics": (),
}


class ConfigError(Exception):
    """The user asked for something that does not exist; exit code 2."""


@dataclass(frozen=True, slots=True)
class Choices:
    """One interpreter name per slot."""

    server: str
    video_client: str
    store: str
    logger: str
    cache: str = "none"
    metrics: str = "prometheus"


@dataclass(frozen=True, slots=True)
class Profile:
    """A named bundle of choices, with a sentence for ``--list-profiles``."""

    name: str
    description: str
    choices: Choices


PROFILES: Mapping[str, Profile] = {
    p.name: p
    for p in (
        Profile(
            "demo",
            "default, offline: fake YouTube, durable SQLite store, dropping logger",
            Choices(server="starlette", video_client="fake", store="sqlite", logger="dropping"),
        ),
        Profile(
            "v1",
            "the talk's v1: log everything, list store, httpx call per video",
            Choices(server="starlette", video_client="httpx", store="list", logger="all"),
        ),
        Profile(
            "v2",
            "v1 with a logger that drops above 1,000 events/s",
            Choices(server="starlette", video_client="httpx", store="list", logger="dropping"),
        ),
        Profile(
            "v3",
            "v2 with another HTTP client: aiohttp, still one call per video",
            Choices(server="starlette", video_client="aiohttp", store="list", logger="dropping"),
        ),
        Profile(
            "v4",
            "v3 with statistics cached (TTL, single-flight, stale-while-revalidate)",
            Choices(
                server="starlette", video_client="aiohttp", store="list", logger="dropping", cache="stats"
            ),
        ),
        Profile(
            "v5",
            "v4 with another HTTP server: Granian (Rust) through RSGI",
            Choices(server="granian", video_client="aiohttp", store="list", logger="dropping", cache="stats"),
        ),
        Profile(
            "fast",
            "everything measured fastest: dict store, batched aiohttp, cache, Granian",
            Choices(
                server="granian",
                video_client="aiohttp-batched",
                store="dict",
                logger="dropping",
                cache="stats",
            ),
        ),
        Profile(
            "distributed",
            "shared state for many workers/hosts: Redis store and Redis stats cache",
            Choices(
                server="asgi", video_client="aiohttp-batched", store="redis", logger="dropping", cache="redis"
            ),
        ),
        Profile(
            "youtube",
            "the real YouTube Data API (needs YOUTUBE_API_KEY): batched aiohttp, cache saves quota",
            Choices(
                server="starlette",
                video_client="aiohttp-batched",
                store="sqlite",
                logger="dropping",
                cache="stats",
            ),
        ),
    )
}
DEFAULT_PROFILE = "demo"


@dataclass(frozen=True, slots=True)
class Secret:
    """A value that never appears in a repr, a log line or an error."""

    value: str = field(repr=False)

    def __repr__(self) -> str:
        return "Secret('***')"


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the composition root needs, resolved and validated."""

    profile: str
    choices: Choices
    host: str = "127.0.0.1"
    port: int = 8080
    youtube_api_url: str = DEFAULT_YOUTUBE_API_URL
    youtube_api_key: Secret | None = None
    log_rate_limit: int = 1_000
    db_path: str = DEFAULT_DB_PATH
    write_token: Secret | None = None
    max_videos: int = DEFAULT_MAX_VIDEOS
    keepalive_s: float = 5.0
    graceful_shutdown_s: float = 10.0
    limit_concurrency: int = 1024
    backlog: int = 2048
    granian_tasks: str = "asyncio"
    prometheus_multiproc_dir: str | None = None
    redis_url: Secret = Secret(DEFAULT_REDIS_URL)  # may carry a password
    redis_timeout_s: float = 0.5
    redis_connections: int = 64
    upstream_call_timeout_s: float = 1.0
    upstream_deadline_s: float = 2.0
    upstream_concurrency: int = 16
    upstream_connections: int = 64
    breaker_threshold: int = 5
    breaker_cooldown_s: float = 5.0
    cache_ttl_s: float = 10.0
    cache_stale_while_revalidate_s: float = 30.0
    cache_stale_if_error_s: float = 300.0
    cache_max_entries: int = 10_000


@dataclass(frozen=True, slots=True)
class CommandLine:
    """What ``main.py`` was asked to do."""

    settings: Settings
    list_profiles: bool


def _slot_flag(slot: str) -> str:
    return "--" + slot.replace("_", "-")


def _slot_env(slot: str) -> str:
    return "INFLUENCER_STATS_" + slot.upper()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="main.py",
        description="influencer-stats: YouTube statistics for collections of videos.",
    )
    parser.add_argument(
        "--profile", help=f"profile name (env INFLUENCER_STATS_PROFILE, default {DEFAULT_PROFILE})"
    )
    parser.add_argument("--host", help="bind address (env INFLUENCER_STATS_HOST, default 127.0.0.1)")
    parser.add_argument("--port", help="bind port (env INFLUENCER_STATS_PORT, default 8080)")
    parser.add_argument("--list-profiles", action="store_true", help="print the profiles and exit")
    for slot in CHOICES:
        parser.add_argument(
            _slot_flag(slot),
            dest=slot,
            help=f"override the profile's {slot.replace('_', ' ')} (env {_slot_env(slot)})",
        )
    return parser


def _choose(slot: str, name: str) -> str:
    if name in CHOICES[slot]:
        return name
    valid = ", ".join(CHOICES[slot])
    if name in PLANNED[slot]:
        raise ConfigError(f"{slot.replace('_', ' ')} {name!r} is not available yet; available: {valid}")
    raise ConfigError(f"unknown {slot.replace('_', ' ')} {name!r}; valid: {valid}")


def _port(raw: str) -> int:
    if raw.isdigit() and 0 < int(raw) < 65536:
        return int(raw)
    raise ConfigError(f"port must be 1-65535, got {raw!r}")


def _number(environ: Mapping[str, str], name: str, default: float, *, integer: bool = False) -> float:
    raw = environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw) if integer else float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a {'whole ' if integer else ''}number, got {raw!r}") from None
    if value <= 0:
        raise ConfigError(f"{name} must be positive, got {raw!r}")
    return value


def _granian_tasks(environ: Mapping[str, str]) -> str:
    """Granian's task implementation: asyncio's (the default) or Granian's Rust one.

    The Rust one answered ~20% more cached GETs here, but Granian 2.8.9 keeps memory
    for every request whose body the app reads (measured: a bare RSGI app reading
    PUT bodies grew from 27 to 610 MB in 15 s; the same app on asyncio tasks stayed
    at 31 MB), and Granian calls it experimental. Opt in only for read-only traffic.
    """
    name = "INFLUENCER_STATS_GRANIAN_TASKS"
    value = environ.get(name) or "asyncio"
    if value not in ("rust", "asyncio"):
        raise ConfigError(f"{name} must be rust or asyncio, got {value[:40]!r}")
    return value


def _max_videos(environ: Mapping[str, str]) -> int:
    name = "INFLUENCER_STATS_MAX_VIDEOS"
    value = int(_number(environ, name, DEFAULT_MAX_VIDEOS, integer=True))
    if value > MAX_VIDEOS_BOUND:
        raise ConfigError(
            f"{name} must be at most {MAX_VIDEOS_BOUND:,} (a 1 MiB body holds no more ids), got {value}"
        )
    return value


def resolve(
    profile_name: str | None,
    overrides: Mapping[str, str | None],
    environ: Mapping[str, str],
    *,
    host: str | None = None,
    port: str | None = None,
) -> Settings:
    """Settings from a profile, per-slot overrides, then environment fallbacks."""
    name = profile_name or environ.get("INFLUENCER_STATS_PROFILE") or DEFAULT_PROFILE
    profile = PROFILES.get(name)
    if profile is None:
        raise ConfigError(f"unknown profile {name!r}; valid: {', '.join(PROFILES)}")
    chosen = {
        f.name: _choose(
            f.name,
            overrides.get(f.name) or environ.get(_slot_env(f.name)) or getattr(profile.choices, f.name),
        )
        for f in fields(Choices)
    }
    key = environ.get("YOUTUBE_API_KEY")
    url = environ.get("YOUTUBE_API_URL") or DEFAULT_YOUTUBE_API_URL
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"YOUTUBE_API_URL must be an http(s) URL, got {url[:100]!r}")
    choices = replace(profile.choices, **chosen)
    if choices.video_client != "fake" and url == DEFAULT_YOUTUBE_API_URL and not key:
        raise ConfigError(
            f"video client {choices.video_client!r} calls the real YouTube API: set YOUTUBE_API_KEY "
            "(or point YOUTUBE_API_URL at a videos.list double)"
        )
    return Settings(
        profile=name,
        choices=choices,
        host=host or environ.get("INFLUENCER_STATS_HOST") or "127.0.0.1",
        port=_port(port or environ.get("INFLUENCER_STATS_PORT") or "8080"),
        youtube_api_url=url,
        db_path=environ.get("INFLUENCER_STATS_DB") or DEFAULT_DB_PATH,
        write_token=Secret(token) if (token := environ.get("INFLUENCER_STATS_WRITE_TOKEN")) else None,
        max_videos=_max_videos(environ),
        keepalive_s=_number(environ, "INFLUENCER_STATS_KEEPALIVE", 5.0),
        graceful_shutdown_s=_number(environ, "INFLUENCER_STATS_GRACEFUL_SHUTDOWN", 10.0),
        limit_concurrency=int(_number(environ, "INFLUENCER_STATS_LIMIT_CONCURRENCY", 1024, integer=True)),
        backlog=int(_number(environ, "INFLUENCER_STATS_BACKLOG", 2048, integer=True)),
        granian_tasks=_granian_tasks(environ),
        prometheus_multiproc_dir=environ.get("PROMETHEUS_MULTIPROC_DIR") or None,
        redis_url=Secret(environ.get("REDIS_URL") or DEFAULT_REDIS_URL),
        redis_timeout_s=_number(environ, "INFLUENCER_STATS_REDIS_TIMEOUT", 0.5),
        redis_connections=int(_number(environ, "INFLUENCER_STATS_REDIS_CONNECTIONS", 64, integer=True)),
        youtube_api_key=Secret(key) if key else None,
        upstream_call_timeout_s=_number(environ, "INFLUENCER_STATS_UPSTREAM_TIMEOUT", 1.0),
        upstream_deadline_s=_number(environ, "INFLUENCER_STATS_UPSTREAM_DEADLINE", 2.0),
        upstream_concurrency=int(_number(environ, "INFLUENCER_STATS_UPSTREAM_CONCURRENCY", 16, integer=True)),
        upstream_connections=int(_number(environ, "INFLUENCER_STATS_UPSTREAM_CONNECTIONS", 64, integer=True)),
        breaker_threshold=int(_number(environ, "INFLUENCER_STATS_BREAKER_THRESHOLD", 5, integer=True)),
        breaker_cooldown_s=_number(environ, "INFLUENCER_STATS_BREAKER_COOLDOWN", 5.0),
        cache_ttl_s=_number(environ, "INFLUENCER_STATS_CACHE_TTL", 10.0),
        cache_stale_while_revalidate_s=_number(environ, "INFLUENCER_STATS_CACHE_SWR", 30.0),
        cache_stale_if_error_s=_number(environ, "INFLUENCER_STATS_CACHE_SIE", 300.0),
        cache_max_entries=int(_number(environ, "INFLUENCER_STATS_CACHE_MAX_ENTRIES", 10_000, integer=True)),
    )


def parse_command_line(argv: Sequence[str], environ: Mapping[str, str]) -> CommandLine:
    """Parse ``main.py`` arguments; argparse itself exits 2 on malformed flags."""
    args = _parser().parse_args(list(argv))
    settings = resolve(
        args.profile,
        {slot: getattr(args, slot) for slot in CHOICES},
        environ,
        host=args.host,
        port=args.port,
    )
    return CommandLine(settings=settings, list_profiles=args.list_profiles)


def describe_profiles() -> str:
    """A table of every profile and its choices."""
    header = ("profile", *(f.name.replace("_", "-") for f in fields(Choices)), "description")
    rows = [
        (p.name, *(getattr(p.choices, f.name) for f in fields(Choices)), p.description)
        for p in PROFILES.values()
    ]
    widths = [max(len(str(row[i])) for row in (header, *rows)) for i in range(len(header))]
    return "\n".join(
        "  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in (header, *rows)
    )
