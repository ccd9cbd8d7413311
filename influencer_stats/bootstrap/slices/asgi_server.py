"""Slice ``asgi_server``: the API as a hand-routed ASGI app on uvicorn (``--server asgi``).

Its room is ``servers/asgi.py`` (the ASGI app around ``HttpApi``, its runner, the ``SERVER``
record). The profile that names it (``distributed``) is offered only while it is installed
(``config.resolve.offered``); the cross-server suites take it from the registry.
"""

from __future__ import annotations

from influencer_stats.bootstrap.servers import SERVERS
from influencer_stats.bootstrap.slices.slice import Slice

SLICE = Slice(
    "asgi_server",
    "a hand-routed ASGI app on uvicorn, beside Starlette",
    files=("influencer_stats/servers/asgi*",),
    modules=("influencer_stats.servers.asgi",),
)

SERVERS.register("asgi", "influencer_stats.servers.asgi", "hand-routed ASGI on uvicorn")
