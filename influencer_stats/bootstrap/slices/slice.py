"""What a slice declares: its name, a line of doc, and the files that are it; what two slices
are only together (a ``Joint``)."""

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
    ``shared`` are files it shares with other slices (the same paths declared by each): they go
    with the last of them removed (the claims of an interval: the history's and the sources').
    What it is only with another slice installed is a ``Joint``, in a module of its own.
    """

    name: str
    doc: str
    files: tuple[str, ...]
    modules: tuple[str, ...]
    slots: tuple[Slot, ...] = ()
    shared: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Joint:
    """What two slices are only together: gone when EITHER is removed (``shared`` goes with the last).

    Its module is ``bootstrap/slices/<a>__<b>.py`` (``of`` joined by ``__``), listed by neither
    slice's line: ``slices.load()`` imports it, so its entries join their registries, only when
    both are installed, and declares it there as ``JOINT = Joint(("a", "b"), ...)``. ``files`` and
    ``modules`` are as a slice's (the module's own file is one of them without being listed);
    removing either slice deletes them (``scripts/slices.py``), so what is left names neither (the
    history's SQLite entry, its interpreter and its tests: ``history__sqlite``).
    """

    of: tuple[str, str]
    doc: str
    files: tuple[str, ...]
    modules: tuple[str, ...]

    @property
    def name(self) -> str:
        return "__".join(self.of)


#: The claims of an interval written once (``interpreters/interval_claims.py``; its Redis script
#: is the ``redis`` slice's): the history's and the sources' (``Slice.shared``), gone with the
#: last of the two.
INTERVAL_CLAIMS = ("influencer_stats/interpreters/interval_claims.py",)

#: Worker processes tied to their parent, and the parent's heartbeat watch (``serving/lifeline.py``):
#: the ``workers`` slice's supervisor's and Granian's (which forks even one worker), declared by
#: both (``Slice.shared``), gone with the last of the two.
LIFELINE = (
    "influencer_stats/serving/lifeline.py",
    "tests/unit/test_lifeline.py",
)
