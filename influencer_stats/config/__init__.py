"""Configuration: which interpreters to run, read from argv and environ, above the composition root.

- ``profiles``: named bundles of interpreter choices.
- ``resolve``: flags + environment + profile → validated ``Settings``
  (``influencer_stats.settings``, every setting declared once, lives at the
  bottom of the house: everything may read it).
- ``cli``: ``main.py``'s arguments, ``--help``, ``--list-choices``,
  ``--print-settings``, ``--list-profiles``.
- ``docs``: the tables of docs/configuration.md and ``.env.example``, generated.

The slots and their choice names come from the composition root's registries
(``influencer_stats.bootstrap.slots``). Import from the submodules.
"""
