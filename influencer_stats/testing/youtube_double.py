"""A videos.list-compatible YouTube Data API double on aiohttp.web.

Serves ``GET /youtube/v3/videos`` (the base URL a client is configured with is
``http://HOST:PORT/youtube/v3/videos``) with the statistics of
:func:`influencer_stats.interpreters.videos.synthetic.synthetic_stats`, and ``GET /healthz``
(``200 ok``). Ids for which :func:`~influencer_stats.interpreters.videos.synthetic.is_unknown`
holds (they start with ``X``) are silently absent from ``items``, as deleted or
private videos are upstream.

Command line (also runs on Debian's python3-aiohttp 3.8; it needs only the
stdlib, aiohttp and ``influencer_stats.interpreters.videos.synthetic``/``logic.models``)::

    python -m influencer_stats.testing.youtube_double --host 127.0.0.1 --port 8081 \\
        [--require-key KEY] [--latency-ms N] [--stall-seconds S]

Control API (JSON), for scripts and perf runs::

    curl -XPOST localhost:8081/_control/fault -d '{"mode": "quota", "count": 2}'
    curl localhost:8081/_control/stats
    curl -XPOST localhost:8081/_control/reset

Fault modes (see :data:`FAULT_MODES`) apply to the next ``count`` videos.list
requests, or until changed when ``count`` is omitted/null: ``none``, ``quota``
(403 quotaExceeded), ``rate_limit`` (403 rateLimitExceeded), ``bad_key`` (400,
the current "API key not valid" body), ``server_error`` (500 backendError),
``unavailable`` (503 backendError), ``too_many`` (429), ``stall`` (wait
``stall_seconds`` then answer normally), ``malformed`` (200, truncated JSON),
``bad_count`` (200, the first item's ``viewCount`` is ``bad_value``, default
``"-5"``; ``"abc"`` is the other useful value) and ``reset`` (the connection is
aborted without any response). A fault is consumed when the request arrives,
before any other check, so ``count`` always means "the next count requests".

Beware: aiohttp's *client* (3.10+) retries an idempotent request once when the
server disconnects, so a ``reset`` fault with ``count=1`` is invisible to an
aiohttp client (and costs two calls); use ``count=2`` to see the error.

In-process use (tests)::

    async with running_double(require_key="k") as yt:   # port 0: a free port
        yt.state.set_fault("quota", count=1)
        ...  # point the client at yt.url
        assert yt.state.calls == 1

The JSON of a successful response is produced by :func:`render_videos_list`,
which :mod:`influencer_stats.testing.nginx_double` also uses to pre-render its
static files, so the two doubles cannot drift apart.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hmac
import json
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from hashlib import blake2b
from typing import Any, Final, Literal, NoReturn, cast

from aiohttp import web

from influencer_stats.interpreters.videos.synthetic import is_unknown, synthetic_stats

VIDEOS_PATH: Final = "/youtube/v3/videos"
"""Path of videos.list, as on www.googleapis.com."""

MAX_IDS_PER_CALL: Final = 50
"""More ids than this in one call are answered with 400 badRequest."""

BATCH_HISTORY: Final = 100
"""How many recent calls' id lists :class:`DoubleState` keeps."""

MAX_STALL_SECONDS: Final = 600.0
"""Upper bound of ``stall_seconds`` (a stall never hangs a test run forever)."""

FaultMode = Literal[
    "none",
    "quota",
    "rate_limit",
    "bad_key",
    "server_error",
    "unavailable",
    "too_many",
    "stall",
    "malformed",
    "bad_count",
    "reset",
]
FAULT_MODES: Final[tuple[FaultMode, ...]] = (
    "none",
    "quota",
    "rate_limit",
    "bad_key",
    "server_error",
    "unavailable",
    "too_many",
    "stall",
    "malformed",
    "bad_count",
    "reset",
)

JsonObject = dict[str, Any]


# --- Rendering (shared with nginx_double) -------------------------------------


def _etag(*parts: str) -> str:
    """A deterministic, opaque etag (real ones are opaque too)."""
    digest = blake2b("\x00".join(parts).encode(), digest_size=12).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def requested_ids(ids: Sequence[str]) -> list[str]:
    """The distinct non-empty ids, first occurrence first."""
    return list(dict.fromkeys(i for i in ids if i))


def videos_list_response(ids: Sequence[str]) -> JsonObject:
    """The videos.list response (``part=statistics``) for these ids, as a dict.

    Unknown ids are absent, a repeated id appears once, the order is the
    requested one, counts are JSON strings, and ``dislikeCount`` is present only
    when the synthetic dislikes are positive (as for an owner-authorised call).
    """
    items: list[JsonObject] = []
    for vid in requested_ids(ids):
        if is_unknown(vid):
            continue
        s = synthetic_stats(vid)
        statistics: dict[str, str] = {
            "viewCount": str(s.views),
            "likeCount": str(s.likes),
        }
        if s.dislikes > 0:
            statistics["dislikeCount"] = str(s.dislikes)
        statistics["favoriteCount"] = "0"
        statistics["commentCount"] = str(s.comments)
        items.append(
            {
                "kind": "youtube#video",
                "etag": _etag("video", vid),
                "id": vid,
                "statistics": statistics,
            }
        )
    return {
        "kind": "youtube#videoListResponse",
        "etag": _etag("list", *(str(item["id"]) for item in items)),
        "pageInfo": {"totalResults": len(items), "resultsPerPage": len(items)},
        "items": items,
    }


def dump_json(obj: object) -> bytes:
    """Compact UTF-8 JSON, the single serialisation both doubles use."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def render_videos_list(ids: Sequence[str]) -> bytes:
    """The exact response body the doubles serve for a request of these ids."""
    return dump_json(videos_list_response(ids))


# --- Google error bodies -----------------------------------------------------


def error_body(
    code: int,
    message: str,
    *,
    reason: str,
    domain: str = "global",
    status: str | None = None,
    extra: JsonObject | None = None,
    details: list[JsonObject] | None = None,
) -> JsonObject:
    """A Google API error body: ``{"error": {"code", "message", "errors", ...}}``."""
    err: JsonObject = {"message": message, "domain": domain, "reason": reason}
    if extra:
        err.update(extra)
    body: JsonObject = {"code": code, "message": message, "errors": [err]}
    if status is not None:
        body["status"] = status
    if details is not None:
        body["details"] = details
    return {"error": body}


QUOTA_MESSAGE: Final = (
    "The request cannot be completed because you have exceeded your "
    '<a href="/youtube/v3/getting-started#quota">quota</a>.'
)
BAD_KEY_MESSAGE: Final = "API key not valid. Please pass a valid API key."


def quota_body() -> JsonObject:
    """403 quotaExceeded (domain youtube.quota); never worth retrying today."""
    return error_body(403, QUOTA_MESSAGE, reason="quotaExceeded", domain="youtube.quota")


def rate_limit_body() -> JsonObject:
    """403 rateLimitExceeded (domain usageLimits); retry with backoff."""
    return error_body(403, "Rate Limit Exceeded", reason="rateLimitExceeded", domain="usageLimits")


def bad_key_body() -> JsonObject:
    """400 for an invalid key, as Google currently sends it."""
    return error_body(
        400,
        BAD_KEY_MESSAGE,
        reason="badRequest",
        status="INVALID_ARGUMENT",
        details=[
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "API_KEY_INVALID",
                "domain": "googleapis.com",
                "metadata": {"service": "youtube.googleapis.com"},
            }
        ],
    )


def backend_error_body(code: int) -> JsonObject:
    """500/503 backendError (transient)."""
    return error_body(code, "Backend Error", reason="backendError")


def too_many_body() -> JsonObject:
    """429 Too Many Requests, in the google.rpc RESOURCE_EXHAUSTED style."""
    return error_body(
        429,
        "Resource has been exhausted (e.g. check quota).",
        reason="rateLimitExceeded",
        status="RESOURCE_EXHAUSTED",
    )


def missing_part_body() -> JsonObject:
    """400 for a request without ``part`` (Google's "Required parameter" error)."""
    return error_body(
        400,
        "Required parameter: part",
        reason="required",
        extra={"locationType": "parameter", "location": "part"},
    )


def part_without_statistics_body(part: str) -> JsonObject:
    """400 for a ``part`` that lacks ``statistics`` (a double-only rule)."""
    return error_body(
        400,
        f"Required parameter: part must include statistics (got {part!r})",
        reason="badRequest",
        extra={"locationType": "parameter", "location": "part"},
    )


def missing_id_body() -> JsonObject:
    """400 for a request without any ``id`` parameter (no filter selected)."""
    return error_body(
        400,
        "No filter selected. Expected one of: chart, id, myRating",
        reason="missingRequiredParameter",
        extra={"locationType": "parameter", "location": "id"},
    )


def too_many_ids_body(n: int) -> JsonObject:
    """400 badRequest for more than :data:`MAX_IDS_PER_CALL` ids (upstream: unverified)."""
    return error_body(
        400,
        f"Required parameter: id must list at most {MAX_IDS_PER_CALL} ids (got {n})",
        reason="badRequest",
        status="INVALID_ARGUMENT",
        extra={"locationType": "parameter", "location": "id"},
    )


_FAULT_RESPONSES: Final[dict[str, tuple[int, Callable[[], JsonObject]]]] = {
    "quota": (403, quota_body),
    "rate_limit": (403, rate_limit_body),
    "bad_key": (400, bad_key_body),
    "server_error": (500, lambda: backend_error_body(500)),
    "unavailable": (503, lambda: backend_error_body(503)),
    "too_many": (429, too_many_body),
}


# --- State -------------------------------------------------------------------


@dataclass(slots=True)
class FaultState:
    """The active fault: ``remaining`` is None for "until changed"."""

    mode: FaultMode = "none"
    remaining: int | None = None
    stall_seconds: float = 30.0
    bad_value: str = "-5"

    def to_json(self) -> JsonObject:
        """The JSON the control API reports."""
        return {
            "mode": self.mode,
            "remaining": self.remaining,
            "stall_seconds": self.stall_seconds,
            "bad_value": self.bad_value,
        }


@dataclass(slots=True)
class DoubleState:
    """Counters and the fault switch of one double (mutable, one event loop)."""

    default_stall_seconds: float = 30.0
    calls: int = 0
    ids_requested: int = 0
    max_ids_in_call: int = 0
    batches: deque[list[str]] = field(default_factory=lambda: deque(maxlen=BATCH_HISTORY))
    key_header_seen: bool = False
    key_in_query_seen: bool = False
    fault: FaultState = field(default_factory=FaultState)

    def __post_init__(self) -> None:
        self.default_stall_seconds = _clamp_stall(self.default_stall_seconds)
        self.fault.stall_seconds = self.default_stall_seconds

    def reset(self) -> None:
        """Zero every counter and switch the fault off."""
        self.calls = 0
        self.ids_requested = 0
        self.max_ids_in_call = 0
        self.batches.clear()
        self.key_header_seen = False
        self.key_in_query_seen = False
        self.fault = FaultState(stall_seconds=self.default_stall_seconds)

    def set_fault(
        self,
        mode: FaultMode,
        count: int | None = None,
        *,
        stall_seconds: float | None = None,
        bad_value: str | None = None,
    ) -> FaultState:
        """Apply ``mode`` to the next ``count`` videos.list calls (None: until changed)."""
        if mode not in FAULT_MODES:
            raise ValueError(f"unknown fault mode {mode!r}; one of {', '.join(FAULT_MODES)}")
        if count is not None and count < 1:
            raise ValueError("count must be >= 1 (omit it for 'until changed')")
        self.fault = FaultState(
            mode=mode,
            remaining=None if mode == "none" else count,
            stall_seconds=(
                self.default_stall_seconds if stall_seconds is None else _clamp_stall(stall_seconds)
            ),
            bad_value="-5" if bad_value is None else bad_value,
        )
        return self.fault

    def take_fault(self) -> FaultState:
        """The fault for the call that just arrived; consumes one of ``count``."""
        current = self.fault
        if current.mode == "none" or current.remaining is None:
            return current
        current.remaining -= 1
        if current.remaining <= 0:
            self.fault = FaultState(stall_seconds=current.stall_seconds, bad_value=current.bad_value)
        return current

    def record(self, ids: list[str], *, key_header: bool, key_in_query: bool) -> None:
        """Count one videos.list call and the (non-empty) ids it carried."""
        self.calls += 1
        self.ids_requested += len(ids)
        self.max_ids_in_call = max(self.max_ids_in_call, len(ids))
        self.batches.append(ids)
        self.key_header_seen = self.key_header_seen or key_header
        self.key_in_query_seen = self.key_in_query_seen or key_in_query

    def snapshot(self) -> JsonObject:
        """The JSON of ``GET /_control/stats``."""
        return {
            "calls": self.calls,
            "ids_requested": self.ids_requested,
            "max_ids_in_call": self.max_ids_in_call,
            "batches": [list(b) for b in self.batches],
            "key_header_seen": self.key_header_seen,
            "key_in_query_seen": self.key_in_query_seen,
            "fault": self.fault.to_json(),
        }


def _clamp_stall(seconds: float) -> float:
    return min(max(float(seconds), 0.0), MAX_STALL_SECONDS)


# --- The application -----------------------------------------------------------


def _json_response(status: int, obj: object) -> web.Response:
    return web.Response(status=status, body=dump_json(obj), content_type="application/json", charset="UTF-8")


def _bytes_response(body: bytes) -> web.Response:
    return web.Response(status=200, body=body, content_type="application/json", charset="UTF-8")


class _ConnectionAborted(web.HTTPInternalServerError):
    """Raised after the transport was aborted; aiohttp cannot write it anywhere."""


def _abort_connection(request: web.Request) -> NoReturn:
    transport = request.transport
    if transport is not None:
        transport.abort()
    # The transport is closing, so aiohttp's attempt to send this exception's
    # response fails with ConnectionResetError, which it treats as a client
    # disconnect: nothing reaches the wire and nothing is logged as an error.
    raise _ConnectionAborted()


def _bad_count_body(ids: Sequence[str], bad_value: str) -> bytes:
    response = videos_list_response(ids)
    items = cast(list[JsonObject], response["items"])
    if items:
        items[0]["statistics"]["viewCount"] = bad_value
    return dump_json(response)


def create_app(state: DoubleState, *, require_key: str | None = None, latency_ms: int = 0) -> web.Application:
    """The double's aiohttp application, reporting into ``state``.

    With ``require_key`` set, a videos.list request must carry exactly that key
    in the ``X-Goog-Api-Key`` header (a ``key`` query parameter does not count
    and is recorded as a leak). ``latency_ms`` delays every videos.list call.
    """
    closing = asyncio.Event()
    latency_s = max(latency_ms, 0) / 1000.0

    async def sleep_unless_closing(seconds: float) -> None:
        if seconds <= 0:
            return
        with suppress(TimeoutError):
            await asyncio.wait_for(closing.wait(), timeout=seconds)

    async def videos(request: web.Request) -> web.StreamResponse:
        query = request.query
        ids = [piece for raw in query.getall("id", []) for piece in raw.split(",") if piece]
        header_key = request.headers.get("X-Goog-Api-Key")
        state.record(ids, key_header=bool(header_key), key_in_query="key" in query)
        fault = state.take_fault()  # before any await: concurrent calls consume in order

        await sleep_unless_closing(latency_s)

        if fault.mode == "reset":
            _abort_connection(request)
        if fault.mode in _FAULT_RESPONSES:
            status, make_body = _FAULT_RESPONSES[fault.mode]
            return _json_response(status, make_body())
        if fault.mode == "stall":
            await sleep_unless_closing(fault.stall_seconds)

        if require_key is not None and not (
            header_key is not None and hmac.compare_digest(header_key.encode(), require_key.encode())
        ):
            return _json_response(400, bad_key_body())
        parts = [p.strip() for p in ",".join(query.getall("part", [])).split(",")]
        if not any(parts):
            return _json_response(400, missing_part_body())
        if "statistics" not in parts:
            return _json_response(400, part_without_statistics_body(query.get("part", "")))
        if "id" not in query:
            return _json_response(400, missing_id_body())
        if len(ids) > MAX_IDS_PER_CALL:
            return _json_response(400, too_many_ids_body(len(ids)))

        if fault.mode == "malformed":
            body = render_videos_list(ids)
            return _bytes_response(body[: max(len(body) // 2, 1)])
        if fault.mode == "bad_count":
            return _bytes_response(_bad_count_body(ids, fault.bad_value))
        return _bytes_response(render_videos_list(ids))

    async def healthz(request: web.Request) -> web.StreamResponse:
        return web.Response(text="ok")

    async def control_fault(request: web.Request) -> web.StreamResponse:
        try:
            payload = await request.json()
        except ValueError:
            return _json_response(400, {"error": "body must be a JSON object"})
        if not isinstance(payload, dict):
            return _json_response(400, {"error": "body must be a JSON object"})
        mode = payload.get("mode")
        count = payload.get("count")
        stall = payload.get("stall_seconds")
        bad_value = payload.get("bad_value")
        if mode not in FAULT_MODES:
            return _json_response(400, {"error": f"mode must be one of {list(FAULT_MODES)}", "got": mode})
        if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
            return _json_response(400, {"error": "count must be an integer >= 1 or null"})
        if stall is not None and (isinstance(stall, bool) or not isinstance(stall, int | float) or stall < 0):
            return _json_response(400, {"error": "stall_seconds must be a number >= 0"})
        if bad_value is not None and not isinstance(bad_value, str):
            return _json_response(400, {"error": "bad_value must be a string"})
        fault = state.set_fault(
            cast(FaultMode, mode),
            count,
            stall_seconds=None if stall is None else float(stall),
            bad_value=bad_value,
        )
        return _json_response(200, fault.to_json())

    async def control_stats(request: web.Request) -> web.StreamResponse:
        return _json_response(200, state.snapshot())

    async def control_reset(request: web.Request) -> web.StreamResponse:
        state.reset()
        return _json_response(200, state.snapshot())

    async def on_shutdown(app: web.Application) -> None:
        closing.set()  # wake stalled and delayed handlers so shutdown is quick

    app = web.Application()
    app.router.add_get(VIDEOS_PATH, videos)
    app.router.add_get("/healthz", healthz)
    app.router.add_post("/_control/fault", control_fault)
    app.router.add_get("/_control/stats", control_stats)
    app.router.add_post("/_control/reset", control_reset)
    app.on_shutdown.append(on_shutdown)
    return app


# --- Running it ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunningDouble:
    """A double listening on a real socket."""

    host: str
    port: int
    state: DoubleState

    @property
    def base(self) -> str:
        """``http://host:port`` (for /healthz and /_control/...)."""
        return f"http://{self.host}:{self.port}"

    @property
    def url(self) -> str:
        """The videos.list base URL a client is configured with."""
        return f"{self.base}{VIDEOS_PATH}"


@asynccontextmanager
async def running_double(
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    state: DoubleState | None = None,
    require_key: str | None = None,
    latency_ms: int = 0,
    stall_seconds: float = 30.0,
) -> AsyncIterator[RunningDouble]:
    """Run the double on ``host:port`` (0: a free port) for the ``async with`` body.

    ``stall_seconds`` is the default stall of a fresh state (ignored when
    ``state`` is given). On exit, stalled requests are woken and the server
    is stopped.
    """
    st = state if state is not None else DoubleState(default_stall_seconds=stall_seconds)
    app = create_app(st, require_key=require_key, latency_ms=latency_ms)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        actual_port = port
        for address in runner.addresses:
            if isinstance(address, tuple) and len(address) >= 2:
                actual_port = int(address[1])
                break
        yield RunningDouble(host=host, port=actual_port, state=st)
    finally:
        await runner.cleanup()


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry point (``python -m influencer_stats.testing.youtube_double``)."""
    parser = argparse.ArgumentParser(
        prog="python -m influencer_stats.testing.youtube_double",
        description="videos.list-compatible YouTube Data API double",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8081)
    parser.add_argument("--require-key", default=None, help="the X-Goog-Api-Key every call must carry")
    parser.add_argument("--latency-ms", type=int, default=0, help="fixed delay per videos.list call")
    parser.add_argument(
        "--stall-seconds",
        type=float,
        default=30.0,
        help=f"default duration of the 'stall' fault (0..{MAX_STALL_SECONDS:g})",
    )
    args = parser.parse_args(argv)
    state = DoubleState(default_stall_seconds=args.stall_seconds)
    app = create_app(state, require_key=args.require_key, latency_ms=args.latency_ms)

    def announce(*_: object) -> None:
        print(
            f"youtube double: http://{args.host}:{args.port}{VIDEOS_PATH}",
            flush=True,
        )

    web.run_app(
        app,
        host=args.host,
        port=args.port,
        access_log=None,
        shutdown_timeout=2.0,
        print=announce,
    )


if __name__ == "__main__":
    main()
