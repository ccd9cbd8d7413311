"""What every server shares, below the servers (``influencer_stats.servers``).

- ``server``: the ``Server`` record each server module exports as ``SERVER``.
- ``address``: the start-up line, the busy-port line, the claim on the address.
- ``environment``: the settings worker processes inherit, and their metrics directory.
- ``workers``: several worker processes on one port under a supervising parent.
- ``lifeline``: workers that end with their parent, and a parent that notices a hung worker.
- ``uvicorn``, ``uvicorn_protocol``: the runner of the ASGI servers and its hardened protocol.
"""
