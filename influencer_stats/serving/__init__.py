"""What every server shares, below the servers (``influencer_stats.servers``).

- ``server``: the ``Server`` record each server module exports as ``SERVER``.
- ``address``: the start-up line, the busy-port line, the claim on the address.
- ``environment``: the settings worker processes inherit, and their metrics directory.
- ``supervised``: what a runner asks of several worker processes (the ``Worker``, ``supervise``).
- ``workers``, ``uvicorn_supervisors``: several worker processes on one port under a supervising
  parent, and uvicorn's own supervisors (the ``workers`` slice, when installed).
- ``lifeline``: workers that end with their parent, and a parent that notices a hung worker
  (shared by the ``workers`` and ``granian_server`` slices).
- ``uvicorn``, ``uvicorn_protocol``: the runner of the ASGI servers and its hardened protocol.
"""
