"""Slice ``aiohttp_server``: aiohttp.web as a server (``--server aiohttp``).

Its room is ``servers/aiohttp`` (the adapter around ``HttpApi``, the runner, the ``SERVER``
record); the cross-server suites take it from the server registry like every other server.
"""

from __future__ import annotations

from influencer_stats.bootstrap.servers import SERVERS
from influencer_stats.bootstrap.slices.slice import Slice

SLICE = Slice(
    "aiohttp_server",
    "aiohttp.web as a server, beside Starlette",
    files=("influencer_stats/servers/aiohttp",),
    modules=("influencer_stats.servers.aiohttp",),
)

SERVERS.register("aiohttp", "influencer_stats.servers.aiohttp", "aiohttp.web")
