"""Configuration: which interpreters to run, and every setting, read from argv and environ.

- ``settings``: ``Settings``, every setting declared once (variable, type,
  default, bounds, doc).
- ``profiles``: named bundles of interpreter choices.
- ``resolve``: flags + environment + profile → validated ``Settings``.
- ``cli``: ``main.py``'s arguments, ``--help``, ``--list-choices``,
  ``--print-settings``, ``--list-profiles``.

The slots and their choice names come from the composition root's registries
(``influencer_stats.bootstrap.slots``). Import from the submodules.
"""
