"""The ``server`` slot: which HTTP server runs the API.

A server runs the composition root, so it sits above it, in a room of its own
(``influencer_stats.servers.<name>``: its adapter, its runner, its ``SERVER``
record, see ``serving.server``). An entry here names that module, imported
only when it is chosen (as SQLAlchemy's dialect registry names its dialects),
so the root imports no server and a profile never imports a server it does
not run. A new server is its module plus one line below, or, when it is optional,
a slice that registers it (``bootstrap/slices``: aiohttp, asgi, granian).
"""

from __future__ import annotations

from influencer_stats.bootstrap.registry import Registry

#: Server name → the module that holds its ``SERVER``.
SERVERS: Registry[str] = Registry("server")

SERVERS.register("starlette", "influencer_stats.servers.starlette", "Starlette on uvicorn")
