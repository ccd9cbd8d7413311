"""The reference rows: what each profile is measured beside, and the order of a round.

Four references, each a server with no service behind it or a service with no
architecture in it:

- ``ceiling`` (:mod:`perf.ceiling`): a raw ASGI app answering a constant stats body
  on uvicorn with the service's uvicorn settings;
- ``rsgi-ceiling`` (:mod:`perf.rsgi_ceiling`): a raw RSGI app answering the same
  body on Granian with the service's Granian settings;
- ``minimal`` (:mod:`perf.minimal`): the service written in one module, with no
  architecture, on Granian with the same settings, calling the same YouTube double
  with the same HTTP client as the ``aiohttp-batched`` video client;
- ``guarded`` (:mod:`perf.guarded` and its two parts): the service written by hand that keeps,
  on the measured path, the guarantees ``fast`` keeps there (validation, problem JSON,
  request ids, the stats cache and its headers, metrics, deadlines, the answer's checks,
  the rate-limited log); measured as ``guarded`` (its stats cache on) beside a profile
  with a stats cache and as ``guarded+cache=none`` beside one without. Chosen with
  ``perf/run.py --reference guarded``; it records a flame graph like a profile does.

A profile is paired with the reference of its own server (:func:`reference_for`), or
with ``guarded`` or another profile (``--reference fast``) when the run asks for it;
in every round each profile is measured right after its reference
(:func:`round_plan`), so a per-round ratio compares two measurements a minute
apart at most, on a machine whose speed drifts by 2× within a minute.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.servers import server as server_named
from perf.model import CEILING

RSGI_CEILING: Final = "rsgi-ceiling"
MINIMAL: Final = "minimal"
GUARDED: Final = "guarded"
GUARDED_UNCACHED: Final = "guarded+cache=none"
REFERENCES: Final = (CEILING, RSGI_CEILING, MINIMAL, GUARDED, GUARDED_UNCACHED)
#: The references ``--reference`` can pair every profile with (``auto``: each its server's).
CHOSEN: Final = ("auto", GUARDED)
#: The ``cache`` choices ``guarded`` can stand beside: the in-process stats cache, or none.
GUARDED_CACHES: Final = ("stats", "none")
#: The video client whose videos.list calls a reference makes (the nginx double renders them).
REFERENCE_CLIENTS: Final[Mapping[str, str]] = {
    MINIMAL: "aiohttp-batched",
    GUARDED: "aiohttp-batched",
    GUARDED_UNCACHED: "aiohttp-batched",
}

RUNS: Final[Mapping[str, str]] = {
    CEILING: "raw ASGI app, constant JSON body, uvicorn",
    RSGI_CEILING: "raw RSGI app, constant JSON body, Granian with the service's settings",
    MINIMAL: "one module, no architecture: a dict, batched aiohttp videos.list calls, Granian (RSGI)",
    GUARDED: "no architecture, fast's guarantees by hand, stats cache on: Granian (RSGI), batched aiohttp",
    GUARDED_UNCACHED: "no architecture, fast's guarantees by hand, no stats cache: Granian (RSGI), batched aiohttp",
}
#: The ``--cache`` each guarded reference runs with.
GUARDED_CACHE: Final[Mapping[str, str]] = {GUARDED: "stats", GUARDED_UNCACHED: "none"}

#: What ``perf/minimal.py`` does not do that the service does (checked against the code of both).
MINIMAL_LEAVES_OUT: Final = (
    "validation: collection ids, video ids, the number of videos, JSON depth and the body's size "
    "(a body that is not JSON with a `videos` list is a plain 400, anything else is stored as sent)",
    "problem JSON (RFC 9457) answers: its errors are bare statuses with short JSON bodies, and a PUT "
    "answers 200, never 201 with a `Location`",
    "request ids (`x-request-id`), write authorization (`INFLUENCER_STATS_WRITE_TOKEN`), "
    "`HEAD`, `DELETE`, listing and pagination, `/readyz`, `/metrics`, the OpenAPI document and `/docs`",
    "metrics (request and upstream-call histograms, cache and breaker gauges) and logging",
    "the per-request upstream deadline, the per-call `asyncio.timeout`, retries with backoff and "
    "the circuit breaker: aiohttp's own socket timeouts (the same as the service's) are all it has",
    "the quota governor (the lab runs the service with no daily budget anyway) and the stats cache",
    "the upstream answer's checks: size bound, typed decoding (msgspec) and canonical counts; "
    "orjson parses and `int()` converts",
    "the request-body timeout and the service's other hardening, and every other store, server and client",
)


#: What ``perf/guarded*.py`` keep of what ``fast`` does on a stats request (checked against the code of both).
GUARDED_KEEPS: Final = (
    "collection ids checked by the service's own rules (`domain.validation.parse_collection_id`): a path "
    "outside ASCII is a 400, an invalid id a 422, an unknown collection a 404, each the service's "
    "problem JSON, byte for byte",
    "`X-Request-Id`: a sane one echoed, else 16 new hex digits, on every answer",
    "`ETag` on the stats and a collection (the service's hash of the body, once per cache entry), and a "
    "304 for a GET whose `If-None-Match` names it (the header read on every request)",
    "the stats cache with the service's settings: fresh for the TTL, then stale while one refresh runs, "
    "stale-if-error, LRU bound, one computation per collection at a time, dropped by a write; "
    "`Cache-Status` and `Age` as the service renders them (with `+cache=none`: computed every request)",
    "metrics as `fast` records them: the requests counter and the request-latency histogram "
    "(`influencer_stats_http_request_duration_seconds`, the service's buckets), stats-cache events, "
    "videos.list calls and their latency",
    "the video fetch bounded as the service bounds it: each videos.list call by the call timeout, the "
    "fetch by the request deadline; the answer read within 1 MiB and checked by the service's wire "
    "format (`youtube_api.answer`: status, typed decoding, canonical counts); failures are its 502/503/504",
    "one `stats.computed` line per computed stats, with the request id, through the JSON-lines logger "
    "under the rate-limit wrapper (`dropping`, as `fast`)",
)
#: What it leaves out that ``fast`` does (none of it on the success path but the breaker's, the call
#: gate's and the retry loop's bookkeeping).
GUARDED_LEAVES_OUT: Final = (
    "the circuit breaker, retries with backoff and the call gate's fair shares and queue bound "
    "(503 upstream-busy); the quota governor (off in the lab: no daily budget)",
    "write authorization, `DELETE`, listing and pagination, `/readyz`, the OpenAPI document and `/docs`; "
    "`/metrics` renders only the series above",
    "the request-body timeout and stream bound (a `PUT` body is read whole, then checked against 1 MiB), "
    "the JSON depth check (orjson parses; the service's msgspec messages differ), and the server-level "
    "refusals of unknown methods and `*` targets",
    "the loop-lag monitor, dependency checks, the worker lifeline and the watchdog, tracing hooks",
)


def reference_for(choices: Mapping[str, str], chosen: str = "auto") -> str:
    """The reference of a spec, from its ``server``'s runner and its ``cache`` (:func:`perf.specs.lab_choices`).

    ``chosen`` is ``--reference``: ``guarded`` pairs every spec with ``guarded`` (a stats cache)
    or ``guarded+cache=none`` (no cache), whatever its server; a profile spec pairs every spec
    with that profile (measured as a profile is); ``auto``, the rules below.

    A server Granian runs (its ``Server.runner``), with a stats cache: ``rsgi-ceiling`` (a
    cached answer costs about what a constant one does); without (``cache=none``): ``minimal``,
    the same work without the architecture. Every other server, the uvicorn-based ``starlette`` and
    ``asgi`` and also ``aiohttp`` (the lab has no aiohttp.web ceiling), is measured
    against the uvicorn ``ceiling``.
    """
    if chosen == GUARDED:
        return GUARDED_UNCACHED if choices.get("cache") == "none" else GUARDED
    if chosen not in CHOSEN:
        return chosen  # a profile spec (``--reference fast``): every profile beside it
    if _run_by_granian(choices.get("server")):
        return MINIMAL if choices.get("cache") == "none" else RSGI_CEILING
    return CEILING


def _run_by_granian(server: str | None) -> bool:
    """Whether ``server`` (a registered name, or none chosen) declares Granian its runner (``Server.runner``)."""
    return (
        server is not None and server in SLOTS["server"].registry and server_named(server).runner == "granian"
    )


def unpairable(choices: Mapping[str, str], chosen: str, spec: str = "") -> str | None:
    """Why ``spec`` (whose choices are ``choices``) cannot be measured beside the ``chosen`` reference, or None."""
    if spec == chosen:
        return "a profile cannot be its own reference"
    if chosen == GUARDED and choices.get("cache") not in GUARDED_CACHES:
        return f"guarded has an in-process stats cache or none, not cache={choices.get('cache')}"
    return None


def profile_references(pairs: Sequence[tuple[str, str]]) -> list[str]:
    """The references of ``pairs`` that are profile specs (``--reference fast``), in order."""
    return list(dict.fromkeys(reference for _, reference in pairs if reference not in REFERENCES))


def round_plan(pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str | None]]:
    """One round's measurements in order: ``(name, None)`` for a reference, ``(spec, reference)`` for a profile.

    ``pairs`` are ``(spec, reference)``. Each profile comes right after a measurement
    of its reference, so a reference shared by several profiles is measured once per
    profile. The uvicorn ceiling is in every run (the table's ``ceiling %`` column
    divides by it): with no profile paired with it, it opens the round, as before.
    """
    plan: list[tuple[str, str | None]] = []
    if all(reference != CEILING for _, reference in pairs):
        plan.append((CEILING, None))
    for spec, reference in pairs:
        plan += [(reference, None), (spec, reference)]
    return plan


def references_section(used: Sequence[str], pairs: Sequence[tuple[str, str]]) -> str:
    """The report's section on the references this run measured, and what ``minimal`` leaves out."""
    by_reference: dict[str, list[str]] = {}
    for spec, reference in pairs:
        by_reference.setdefault(reference, []).append(spec)
    lines = [
        "## References",
        "",
        "Each profile is paired with a reference of its own server (with `--reference guarded`: with "
        "`guarded`; with `--reference P`: with the profile `P`) and, in every round, measured "
        "right after it (reference, then profile, back to back: the machine's speed drifts by 2× "
        "within a minute). The `× ref` columns are the **medians of the per-round ratios** "
        "(profile over reference: above 1 is more req/s, or a slower p50/p99), not ratios of the "
        "rows; the notes list every round's ratios. A reference shared by several profiles is "
        "measured once beside each of them, and its row is its median measurement.",
        "",
    ]
    descriptions = {
        CEILING: "`ceiling` (`perf/ceiling.py`): a raw ASGI app answering a constant stats body "
        "(`BODY`, 3 videos) on uvicorn with the service's uvicorn settings. The reference of the "
        "profiles on uvicorn (`starlette`, `asgi`) and, for want of an aiohttp.web ceiling, of `aiohttp`.",
        RSGI_CEILING: "`rsgi-ceiling` (`perf/rsgi_ceiling.py`): a raw RSGI app answering the same "
        "constant body on Granian, built with the service's `Granian(...)` arguments (RSGI, loop, "
        "task implementation, HTTP/1 only and its settings, backpressure, backlog, logging; one "
        "worker). The floor of every Granian profile: the reference of those with a stats cache.",
        MINIMAL: "`minimal` (`perf/minimal.py`): the service written in one module with no "
        "architecture, on Granian with the same arguments: a dict of collections, `PUT`/`GET "
        "/collections/{id}` and `GET /collections/{id}/stats` making the batched videos.list calls "
        "(50 distinct ids per call, in order, at most 16 at once) with the `aiohttp-batched` client's "
        "session settings (pool, socket timeouts, API-key header, no redirects), against the same "
        "double, and aggregating the same way: the same JSON, byte for byte. The reference of the "
        "Granian profiles without a stats cache (`cache=none`), whatever their video client.",
        GUARDED: "`guarded` (`perf/guarded.py`): the service written by hand on Granian "
        "with the same arguments, keeping on the measured path the guarantees `fast` keeps there (listed "
        "below), with its stats cache on. The reference of every profile when the run asks for it "
        "(`--reference guarded`) and the profile has a stats cache; its flame graph is recorded too.",
        GUARDED_UNCACHED: "`guarded+cache=none`: the same with no stats cache (stats computed, one "
        "videos.list call, on every request): the reference of a `cache=none` profile under "
        "`--reference guarded`.",
    }
    for reference in profile_references(pairs):
        descriptions[reference] = (
            f"`{reference}`: a profile as a reference (`--reference {reference}`): started, seeded, "
            "warmed up and measured exactly as the profiles are, right before each of them, its "
            "flame graph recorded once in the last round."
        )
    for reference in [*REFERENCES, *profile_references(pairs)]:
        if reference in used:
            paired = by_reference.get(reference)
            suffix = f" Paired here with {', '.join(f'`{p}`' for p in paired)}." if paired else ""
            lines.append(f"- {descriptions[reference]}{suffix}")
    if MINIMAL in used:
        lines += [
            "",
            "What `minimal` leaves out, all of which the service pays for on every request it applies to:",
            "",
        ]
        lines += [f"- {item}" for item in MINIMAL_LEAVES_OUT]
    if GUARDED in used or GUARDED_UNCACHED in used:
        lines += ["", "What `guarded` keeps, as the service does it:", ""]
        lines += [f"- {item}" for item in GUARDED_KEEPS]
        lines += ["", "What `guarded` leaves out:", ""]
        lines += [f"- {item}" for item in GUARDED_LEAVES_OUT]
    lines += [
        "",
        "Every built-in reference runs one worker, whatever a spec's `+workers=N` says (a profile "
        "as a reference runs as its spec says); `ceiling` and "
        "`rsgi-ceiling` answer the 3-video collection's body whatever `--collection` says.",
    ]
    return "\n".join(lines) + "\n"
