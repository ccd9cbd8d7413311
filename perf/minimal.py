"""The service written the way someone would without any architecture: the lab's ``minimal`` reference.

One module, a dict, three routes (``PUT``/``GET /collections/{id}``, ``GET
/collections/{id}/stats``) and ``/healthz`` for the lab, on Granian through RSGI
with the service's Granian arguments (:func:`perf.rsgi_ceiling.serve`). A stats
request makes the batched ``videos.list`` calls the ``aiohttp-batched`` video client
makes (the collection's distinct ids in order, 50 per call, at most 16 calls at
once, one call without a task) on an ``aiohttp.ClientSession`` with the same
connector, pool and socket timeouts, the key in ``X-Goog-Api-Key``, no
``User-Agent``, no redirects, and aggregates them the same way, so its answer is the
service's JSON byte for byte. It is a yardstick, not a product: what it leaves out
is :data:`perf.references.MINIMAL_LEAVES_OUT` (validation, problem JSON, request
ids, metrics, logging, deadlines, retries, the breaker, the quota governor...)::

    YOUTUBE_API_URL=http://127.0.0.1:9000/youtube/v3/videos YOUTUBE_API_KEY=k python -m perf.minimal --port 8092
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import aiohttp
import orjson

from perf.rsgi_ceiling import add_granian_arguments, granian_options, serve

if TYPE_CHECKING:
    from granian._granian import RSGIHTTPProtocol as HTTPProtocol
    from granian.rsgi import Scope

#: The service's defaults: INFLUENCER_STATS_UPSTREAM_CONNECTIONS, _UPSTREAM_TIMEOUT and
#: _UPSTREAM_CONCURRENCY, and the ids one videos.list call takes.
POOL: Final = 64
CALL_TIMEOUT_S: Final = 1.0
CONCURRENCY: Final = 16
IDS_PER_CALL: Final = 50

_JSON: Final = [("content-type", "application/json")]
_HEALTHY: Final = b'{"status":"ok"}'
_NOT_FOUND: Final = b'{"error":"not found"}'

collections: dict[str, list[str]] = {}


class UpstreamError(Exception):
    """videos.list answered something other than a 200."""


class Minimal:
    """The RSGI app. Granian calls ``__rsgi_init__`` in its worker before serving, ``__rsgi_del__`` after."""

    def __init__(self) -> None:
        self.session: aiohttp.ClientSession | None = None
        self.url = ""
        self.headers: dict[str, str] = {}

    def __rsgi_init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.url = os.environ["YOUTUBE_API_URL"] + "?part=statistics&id="
        key = os.environ.get("YOUTUBE_API_KEY")
        self.headers = {"X-Goog-Api-Key": key} if key else {}
        self.session = loop.run_until_complete(_open_session())

    def __rsgi_del__(self, loop: asyncio.AbstractEventLoop) -> None:
        if self.session is not None:
            loop.run_until_complete(self.session.close())

    async def __rsgi__(self, scope: Scope, proto: HTTPProtocol) -> None:
        if scope.proto != "http":
            return
        status, body = await self.answer(scope.method, scope.path, proto)
        proto.response_bytes(status, _JSON, body)

    async def answer(self, method: str, path: str, proto: HTTPProtocol) -> tuple[int, bytes]:
        if path == "/healthz":
            return 200, _HEALTHY
        parts = path.split("/")  # "/collections/ID/stats" -> ["", "collections", "ID", "stats"]
        stats = len(parts) == 4 and parts[3] == "stats"
        if not (len(parts) == 3 or stats) or parts[1] != "collections" or not parts[2]:
            return 404, _NOT_FOUND
        if method == "GET":
            videos = collections.get(parts[2])
            if videos is None:
                return 404, _NOT_FOUND
            return await self.stats(videos) if stats else (200, orjson.dumps({"videos": videos}))
        if method != "PUT" or stats:
            return 405, b'{"error":"method not allowed"}'
        try:
            videos = orjson.loads(await proto())["videos"]
        except (ValueError, TypeError, KeyError):
            return 400, b'{"error":"the body is not {\\"videos\\": [...]}"}'
        if not isinstance(videos, list) or not all(isinstance(v, str) for v in videos):
            return 400, b'{"error":"videos is not a list of strings"}'
        collections[parts[2]] = videos
        return 200, orjson.dumps({"videos": videos})

    async def stats(self, videos: list[str]) -> tuple[int, bytes]:
        ids = list(dict.fromkeys(videos))
        chunks = [ids[i : i + IDS_PER_CALL] for i in range(0, len(ids), IDS_PER_CALL)]
        try:
            if len(chunks) == 1:
                answers = [await self.videos_list(chunks[0])]
            else:
                gate = asyncio.Semaphore(CONCURRENCY)

                async def gated(chunk: list[str]) -> dict[str, dict[str, Any]]:
                    async with gate:
                        return await self.videos_list(chunk)

                answers = await asyncio.gather(*(gated(chunk) for chunk in chunks))
        except (aiohttp.ClientError, TimeoutError, UpstreamError, ValueError) as error:
            return 502, orjson.dumps({"error": f"YouTube failed: {type(error).__name__}"})
        found: dict[str, dict[str, Any]] = {}
        for answer in answers:
            found.update(answer)
        impressions = engagements = likes = counted = 0
        missing = []
        for video_id in ids:
            statistics = found.get(video_id)
            if statistics is None:
                missing.append(video_id)
                continue
            counted += 1
            liked = int(statistics.get("likeCount", 0))
            impressions += int(statistics.get("viewCount", 0))
            engagements += (
                liked + int(statistics.get("commentCount", 0)) + int(statistics.get("dislikeCount", 0))
            )
            likes += liked
        body = {
            "impressions": impressions,
            "engagements": engagements,
            "score": engagements + likes,
            "videos": counted,
            "missing": missing,
        }
        return 200, orjson.dumps(body)

    async def videos_list(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        """Statistics by id for one videos.list call of at most 50 ids."""
        assert self.session is not None, "__rsgi_init__ has not run"
        async with self.session.get(
            self.url + ",".join(ids),
            headers=self.headers,
            skip_auto_headers=("User-Agent",),
            allow_redirects=False,
        ) as response:
            body = await response.read()
            if response.status != 200:
                raise UpstreamError(response.status)
        return {item["id"]: item.get("statistics", {}) for item in orjson.loads(body).get("items", [])}


async def _open_session() -> aiohttp.ClientSession:
    """The ``aiohttp-batched`` client's session: its pool and socket timeouts, no total timeout."""
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=POOL, limit_per_host=POOL, ttl_dns_cache=300),
        timeout=aiohttp.ClientTimeout(total=None, sock_connect=CALL_TIMEOUT_S, sock_read=CALL_TIMEOUT_S),
    )


app = Minimal()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m perf.minimal", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8092)
    add_granian_arguments(parser)
    args = parser.parse_args(argv)
    if "YOUTUBE_API_URL" not in os.environ:
        parser.error("set YOUTUBE_API_URL (and YOUTUBE_API_KEY) to a videos.list server")
    serve("perf.minimal:app", args.host, args.port, granian_options(args))


if __name__ == "__main__":
    main()
