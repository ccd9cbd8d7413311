"""The composition root: the only place that knows concrete interpreters.

- ``registry``: what a slot is, and a registry of named builders per slot.
- ``stores``, ``videos``, ``logs``, ``stats``, ``metrics``, ``servers``: one
  registry each; every entry is a small builder that imports its interpreter
  lazily, so a profile that does not use a library never imports it.
- ``slots``: the ordered slots, from which config, ``--help``,
  ``--list-choices``, the logs and the contract suites take their names.
- ``wiring``: the resources builders share (settings, exit stack, checks, what is built once).
- ``root``: ``open_http_api(settings)`` folds each algebra's stack and opens the API.

Serving (running a server with the API) is ``influencer_stats.serving``.
"""
