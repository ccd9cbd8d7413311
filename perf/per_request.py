"""µs of Python per stats request, layer by layer: ``fast`` (the real composition root) beside ``guarded``.

Throughput under wrk says how much the app costs the server, but on two shared cores a few µs
of Python per request hide in the noise, and py-spy at 100 Hz gives each sample ~0.3 µs of a
cached request. So this drives both apps in one process, without a server: each RSGI app is
opened as Granian opens it (``__rsgi_init__`` on a uvloop loop), seeded with the lab's workload
through its own ``PUT``, then asked for the stats ``--requests`` times in a row, awaiting each
layer directly in turn (the whole ``__rsgi__``, then ``HttpApi.answer``, the handler, the stats
query, the use case, each video source of the stack, the videos.list call; guarded's few
methods likewise). The uncached path is measured twice: with the real call to the lab's nginx
double (the whole request is the number to read: a call varies by ±10 µs, more than most
layers cost), and with the call stubbed in both apps at the same boundary (the double's answer,
parsed and checked, after one suspension), where each layer's own cost shows. Each number is CPU time of this process per request (``time.process_time``:
the double, nginx, runs elsewhere), the median of ``--repeat`` repetitions, ``fast`` and
``guarded`` alternating; a layer's own cost is its number less the next one's. The uncached
path makes every request's videos.list call to the lab's nginx double::

    python -m perf.per_request [--requests 20000 --uncached-requests 2000 --repeat 5]

The services' log lines go to ``--log`` (stdout is theirs while they run); the table, to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import inspect
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from perf.service import service_env
from perf.upstream import id_groups, youtube_double
from perf.workload import workload

API_KEY: Final = "perf-dummy-key"
#: One measured step: awaited once per request.
Step = Callable[[], Awaitable[object]]


@dataclass
class Headers:
    """What the apps read of Granian's request headers: ``get`` and ``items``."""

    values: dict[str, str] = field(default_factory=dict)

    def get(self, name: str, default: str | None = None) -> str | None:
        return self.values.get(name, default)

    def items(self) -> list[tuple[str, str]]:
        return list(self.values.items())


@dataclass
class Scope:
    path: str
    method: str = "GET"
    headers: Headers = field(default_factory=Headers)
    query_string: str = ""
    proto: str = "http"
    client: str = "127.0.0.1:50000"  # "host:port", as Granian gives the peer


class Proto:
    """Granian's RSGI protocol as the apps use it: the body (whole, or chunks then ``b""``), and the answer."""

    def __init__(self, body: bytes = b"") -> None:
        self.body = body
        self.status = 0

    async def __call__(self) -> bytes:
        return self.body

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._chunks()

    async def _chunks(self) -> AsyncIterator[bytes]:
        yield self.body
        yield b""

    def response_bytes(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        self.status = status


async def _put(app: Any, collection: str, videos: Sequence[str]) -> None:
    import orjson

    body = orjson.dumps({"videos": list(videos)})
    proto = Proto(body)
    headers = Headers({"content-type": "application/json", "content-length": str(len(body))})
    await app.__rsgi__(Scope(f"/collections/{collection}", "PUT", headers), proto)
    if proto.status not in (200, 201):
        raise RuntimeError(f"PUT /collections/{collection}: {proto.status}")


def _fast_steps(
    app: Any,
    path: str,
    collection: str,
    videos: Sequence[str],
    loop: asyncio.AbstractEventLoop,
    *,
    cached: bool,
) -> list[tuple[str, Step]]:
    """``fast``'s layers for one stats request, outermost first (private attributes: a perf tool)."""
    from influencer_stats.bootstrap.edge import ROUTES
    from influencer_stats.domain.models import CollectionId, VideoId
    from influencer_stats.http import handlers
    from influencer_stats.http.incoming import Incoming
    from influencer_stats.http.stats_reply import stats_reply

    api = app._api
    route, raw = ROUTES.match(path)
    assert route is not None, f"no route matches {path}"
    incoming = Incoming(route, "GET", raw)
    cid = CollectionId(collection)
    proto, scope = Proto(), Scope(path)
    steps: list[tuple[str, Step]] = [
        ("RsgiApp.__rsgi__ (servers/granian/app.py)", lambda: app.__rsgi__(scope, proto)),
        ("HttpApi.answer (http/api.py)", lambda: api.answer(incoming)),
        ("handlers.collection_stats (http/handlers.py)", lambda: handlers.collection_stats(api, incoming)),
    ]
    query = api.stats
    steps.append((f"{type(query).__name__}.stats", lambda: query.stats(cid)))
    if cached:

        async def reply() -> object:
            return stats_reply(answer)

        answer = loop.run_until_complete(query.stats(cid)).unwrap()
        steps.append(("stats_reply (http/stats_reply.py)", reply))
        return steps
    ids = tuple(VideoId(v) for v in dict.fromkeys(videos))
    source = getattr(query, "_source", None)
    while source is not None and hasattr(source, "fetch"):
        steps.append((f"{type(source).__name__}.fetch", _fetch(source, ids)))
        inner = getattr(source, "_inner", None)
        if inner is None and hasattr(source, "_call"):  # the YouTube base: its videos.list call
            call = source._call
            name = (
                "the videos.list call, stubbed"
                if inspect.isfunction(call)
                else f"{type(call).__name__}.__call__"
            )
            steps.append((name, _call(call, ids)))
        source = inner
    return steps


def _fetch(source: Any, ids: Sequence[str]) -> Step:
    return lambda: source.fetch(ids)


def _call(call: Any, ids: Sequence[str]) -> Step:
    return lambda: call(ids)


def _guarded_steps(
    app: Any, path: str, collection: str, videos: Sequence[str], *, cached: bool
) -> list[tuple[str, Step]]:
    proto, scope = Proto(), Scope(path)
    ids = list(dict.fromkeys(videos))
    steps: list[tuple[str, Step]] = [
        ("Guarded.__rsgi__", lambda: app.__rsgi__(scope, proto)),
        (
            f"Guarded.{'cached_stats' if cached else 'stats'}",
            lambda: app.stats_for(collection, "0123456789abcdef"),
        ),
    ]
    if not cached:
        steps += [
            ("Guarded.computed", lambda: app.computed(collection, "0123456789abcdef")),
            ("Guarded.fetch", lambda: app.fetch(ids)),
            ("Guarded.call", lambda: app.call(ids)),
            ("Guarded.videos_list", lambda: app.videos_list(ids)),
        ]
    return steps


async def _per_request(step: Step, requests: int) -> float:
    """CPU µs of this process per awaited ``step()``."""
    gc.collect()
    started = time.process_time()
    for _ in range(requests):
        await step()
    return (time.process_time() - started) / requests * 1e6


@contextlib.contextmanager
def _stdout_to(path: Path) -> Iterator[None]:
    """File descriptor 1 (where the services log) into ``path`` for the block."""
    sys.stdout.flush()
    saved = os.dup(1)
    with path.open("ab") as log:
        os.dup2(log.fileno(), 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _stub(ids: Sequence[str]) -> Callable[[Sequence[str]], Awaitable[object]]:
    """A videos.list call that answers what the double would, after one suspension, with no network."""
    from influencer_stats.interpreters.youtube.youtube_api import MAX_BODY_BYTES, answer
    from youtube_double import render_videos_list

    body = render_videos_list(list(dict.fromkeys(ids)))

    async def videos_list(_: Sequence[str]) -> object:
        await asyncio.sleep(0)  # a real call suspends: each resumption walks the whole await chain
        return answer(200, body, MAX_BODY_BYTES)

    return videos_list


def _stub_fast(app: Any, stub: Callable[[Sequence[str]], Awaitable[object]]) -> None:
    """The YouTube base of fast's video stack (the source holding the ``VideosListCall``) calls ``stub``."""
    source = getattr(app._api.stats, "_source", None)
    while source is not None and not hasattr(source, "_call"):
        source = getattr(source, "_inner", None)
    if source is None:
        raise RuntimeError("no YouTube base found under the stats query (has the stack changed?)")
    source._call = stub


def measure(
    cache: str, requests: int, repeat: int, double_url: str, log: Path, *, stubbed: bool = False
) -> dict[str, list[tuple[str, float]]]:
    """Per app: each layer's median µs per request, outermost first (``stubbed``: no network below)."""
    import uvloop

    from influencer_stats.servers import app_for
    from perf import guarded
    from perf.profiles import service_settings

    load = workload("original")
    # The lab's environment (no INFLUENCER_STATS_* of the caller's, no quota budget), which guarded
    # reads too; fast gets its cache from it.
    env = service_env(double_url, API_KEY, {"INFLUENCER_STATS_CACHE": cache})
    for name in [k for k in os.environ if k.startswith("INFLUENCER_STATS_")]:
        del os.environ[name]
    os.environ.update({k: v for k, v in env.items() if k.startswith(("YOUTUBE_", "INFLUENCER_STATS_"))})
    loop = uvloop.new_event_loop()
    asyncio.set_event_loop(loop)
    cached = cache == "stats"
    path = load.stats_path
    with _stdout_to(log):
        fast = app_for(service_settings(os.environ))  # fast's server's app (Granian's, RSGI)
        fast.__rsgi_init__(loop)
        hand = guarded.Guarded(cache)
        hand.__rsgi_init__(loop)
        try:
            if stubbed:
                stub = _stub(load.videos)
                _stub_fast(fast, stub)
                hand.videos_list = stub  # type: ignore[method-assign,assignment]
            apps: tuple[Any, ...] = (fast, hand)
            for app in apps:
                loop.run_until_complete(_put(app, load.target, load.videos))
                loop.run_until_complete(app.__rsgi__(Scope(path), Proto()))  # the first one computes
            steps = {
                "fast": _fast_steps(fast, path, load.target, load.videos, loop, cached=cached),
                "guarded": _guarded_steps(hand, path, load.target, load.videos, cached=cached),
            }
            samples: dict[str, dict[str, list[float]]] = {
                n: {label: [] for label, _ in s} for n, s in steps.items()
            }
            for round_ in range(repeat):
                for name in ("fast", "guarded") if round_ % 2 == 0 else ("guarded", "fast"):
                    for label, step in steps[name]:
                        samples[name][label].append(loop.run_until_complete(_per_request(step, requests)))
        finally:
            fast.__rsgi_del__(loop)
            hand.__rsgi_del__(loop)
            loop.close()
    return {
        name: [(label, statistics.median(values)) for label, values in layers.items()]
        for name, layers in samples.items()
    }


def table(title: str, measured: dict[str, list[tuple[str, float]]]) -> str:
    lines = [
        f"### {title}",
        "",
        "| app | layer (awaited directly) | µs per request | its own (less the next) |",
        "|---|---|---:|---:|",
    ]
    for name, layers in measured.items():
        for index, (label, us) in enumerate(layers):
            inner = layers[index + 1][1] if index + 1 < len(layers) else None
            own = "" if inner is None else f"{us - inner:.1f}"
            lines.append(f"| {name} | {label} | {us:.1f} | {own} |")
    fast, hand = measured["fast"][0][1], measured["guarded"][0][1]
    lines += [
        "",
        f"Whole request: fast {fast:.1f} µs, guarded {hand:.1f} µs: fast spends {fast - hand:+.1f} µs ({fast / hand:.2f}×).",
    ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.per_request", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--requests", type=int, default=20_000, help="stats requests per measurement, cached (20,000)"
    )
    parser.add_argument("--uncached-requests", type=int, default=2_000, help="the same, uncached (2,000)")
    parser.add_argument(
        "--repeat", type=int, default=5, help="measurements per layer, fast and guarded alternating (5)"
    )
    parser.add_argument(
        "--log", type=Path, default=Path("perf/out/per-request.log"), help="the services' log lines"
    )
    parser.add_argument("--nginx", default="/usr/sbin/nginx")
    args = parser.parse_args(argv)
    if min(args.requests, args.uncached_requests, args.repeat) < 1:
        parser.error("--requests, --uncached-requests and --repeat must be at least 1")
    args.log.parent.mkdir(parents=True, exist_ok=True)
    load = workload("original")
    with (
        tempfile.TemporaryDirectory(prefix="per-request-") as work,
        youtube_double(Path(work), id_groups("aiohttp-batched", load.videos), nginx=args.nginx) as double,
    ):
        print(f"YouTube double: {double.note}", file=sys.stderr)
        cached = measure("stats", args.requests, args.repeat, double.url, args.log)
        uncached = measure("none", args.uncached_requests, args.repeat, double.url, args.log)
        stubbed = measure("none", args.requests, args.repeat, double.url, args.log, stubbed=True)
    runs = f"{args.requests:,} requests × {args.repeat}"
    print(table(f"Cached (a stats cache hit; {runs})", cached))
    print(
        table(
            f"Uncached (`cache=none`: one videos.list call each; {args.uncached_requests:,} × {args.repeat})",
            uncached,
        )
    )
    print(table(f"Uncached, the call stubbed (the double's answer after one suspension; {runs})", stubbed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
