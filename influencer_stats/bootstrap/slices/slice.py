"""What a slice declares: its name, a line of doc, and the files that are it."""

from __future__ import annotations

from dataclasses import dataclass

from influencer_stats.bootstrap.registry import Slot


@dataclass(frozen=True, slots=True)
class Slice:
    """An optional feature: remove it by deleting ``files`` and its line in ``slices.INSTALLED``.

    ``files`` are paths from the checkout's root, a folder standing for everything in it and
    ``*`` matching within one name (``tests/integration/test_tracing*.py``); the slice's own
    module here is one of them without being listed. ``modules`` are the dotted names of its
    code: what is left after a removal must not import any (``make slices`` names the file
    that still does). ``slots`` are choice points of its own (``--history``), after the core's.
    """

    name: str
    doc: str
    files: tuple[str, ...]
    modules: tuple[str, ...]
    slots: tuple[Slot, ...] = ()
