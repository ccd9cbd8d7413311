"""The reference rows: what each profile is measured beside, and the order of a round.

Three references, each a server with no service behind it or a service with no
architecture in it:

- ``ceiling`` (:mod:`perf.ceiling`): a raw ASGI app answering a constant stats body
  on uvicorn with the service's uvicorn settings;
- ``rsgi-ceiling`` (:mod:`perf.rsgi_ceiling`): a raw RSGI app answering the same
  body on Granian with the service's Granian settings;
- ``minimal`` (:mod:`perf.minimal`): the service written in one module, with no
  architecture, on Granian with the same settings, calling the same YouTube double
  with the same HTTP client as the ``aiohttp-batched`` video client.

A profile is paired with the reference of its own server (:func:`reference_for`);
in every round each profile is measured right after its reference
(:func:`round_plan`), so a per-round ratio compares two measurements a minute
apart at most, on a machine whose speed drifts by 2× within a minute.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from perf.model import CEILING

RSGI_CEILING: Final = "rsgi-ceiling"
MINIMAL: Final = "minimal"
REFERENCES: Final = (CEILING, RSGI_CEILING, MINIMAL)
#: The video client whose videos.list calls a reference makes (the nginx double renders them).
REFERENCE_CLIENTS: Final[Mapping[str, str]] = {MINIMAL: "aiohttp-batched"}

RUNS: Final[Mapping[str, str]] = {
    CEILING: "raw ASGI app, constant JSON body, uvicorn",
    RSGI_CEILING: "raw RSGI app, constant JSON body, Granian with the service's settings",
    MINIMAL: "one module, no architecture: a dict, batched aiohttp videos.list calls, Granian (RSGI)",
}

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


def reference_for(choices: Mapping[str, str]) -> str:
    """The reference of a spec, from its ``server`` and ``cache`` choices (:func:`perf.specs.lab_choices`).

    Granian with a stats cache: ``rsgi-ceiling`` (a cached answer costs about what a
    constant one does); Granian without (``cache=none``): ``minimal``, the same work
    without the architecture. Every other server, the uvicorn-based ``starlette`` and
    ``asgi`` and also ``aiohttp`` (the lab has no aiohttp.web ceiling), is measured
    against the uvicorn ``ceiling``.
    """
    if choices.get("server") == "granian":
        return MINIMAL if choices.get("cache") == "none" else RSGI_CEILING
    return CEILING


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
        "Each profile is paired with a reference of its own server and, in every round, measured "
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
    }
    for reference in REFERENCES:
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
    lines += [
        "",
        "Every reference runs one worker, whatever a spec's `+workers=N` says; `ceiling` and "
        "`rsgi-ceiling` answer the 3-video collection's body whatever `--collection` says.",
    ]
    return "\n".join(lines) + "\n"
