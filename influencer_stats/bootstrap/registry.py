"""Registries of named interpreters: one per slot, name → builder.

A *slot* is a choice point of the service (which store, which logger …). Its
registry maps each choice name to a builder, a short function of the root that
imports its interpreter lazily and constructs it from the settings. Everything
that lists choices (config validation and its exit-2 message, ``--help``,
``--list-choices``, the ``service.started`` log line, the configuration page check and the
contract suites) reads the registries, so a new interpreter is its module plus
one entry, which declares what its builder does beyond building (``Entry``)::

    @STORES.add(
        "jsonl",
        "append-only JSON lines in a file",
        paths=("jsonl_path",),
        ready=("jsonl",),
        per_process=("collections", ""),  # "": the hint names the installed shared stores
    )
    async def _jsonl(wiring: Wiring) -> CollectionStore:
        from influencer_stats.interpreters.collections.jsonl import JsonlStore

        path = Path(wiring.settings.jsonl_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        store = await JsonlStore.open(path)
        wiring.exits.push_async_callback(store.close)
        wiring.checks["jsonl"] = store.ping
        return store

(ARCHITECTURE.md, "Add an interpreter", walks through it.)

A slot is either one choice (a *base*: the interpreter of an algebra) or an
ordered list of *wrappers* of that algebra, outermost first, folded around the
base the way Starlette folds middleware. A base entry may name the wrappers it
normally runs with (``dropping`` is the JSON logger under ``rate-limit``); a
profile or the user can override that list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypedDict, TypeVar, Unpack

from influencer_stats.settings import PREFIX, declared

if TYPE_CHECKING:
    from influencer_stats.settings import Settings

B = TypeVar("B")
#: Why an entry cannot run with these settings (exit 2 at start-up), or None.
Check = Callable[["Settings"], "str | None"]
NONE = "none"


class Declared(TypedDict, total=False):
    """What an entry may declare besides its builder and doc (``Entry`` says what each means)."""

    wrappers: tuple[str, ...]
    check: Check | None
    per_process: tuple[str, str] | None
    paths: tuple[str, ...]
    ready: tuple[str, ...]
    silent: bool
    events: str
    scenario: str | None
    shared: bool
    bumps_versions: bool
    spends_quota: bool
    needs: tuple[str, ...]
    preferred: bool


@dataclass(frozen=True, slots=True)
class Entry(Generic[B]):
    """One registered choice: its builder, a line of doc, and what its builder does beyond building.

    Each declaration is read by one generic check or test, so an entry that
    leaves a duty out fails there, whatever the slot:

    - ``wrappers``: the wrappers a base normally runs with (a wrapper slot's default).
    - ``per_process``: ``(what, instead)`` when it keeps ``what`` in each process,
      so another worker would not see it: ``problem`` refuses ``--workers`` > 1
      naming ``instead`` (``tests/integration/test_per_process.py`` builds two
      instances and finds out); ``instead`` empty: the slot's registered choices
      that keep nothing per process, whichever are installed (``Slot.instead``).
    - ``check``: any other reason the settings cannot run it (exit 2 at start-up).
    - ``paths``: the settings (``Settings`` field names) that name files it writes;
      its builder creates their folders. Tests point every declared path into a
      temporary folder, and fail when a build writes anything into the checkout.
    - ``ready``: the readiness checks its builder puts in ``wiring.checks`` (``/readyz``) with
      the default settings; one a setting adds is not declared (the redis store's
      ``redis-replicas``, with ``INFLUENCER_STATS_REDIS_WAIT_REPLICAS``).
    - ``silent``: a logger that writes nothing, metrics that record nothing, or shares that
      count nothing, by design (the root, or the slice, builds no layer for it).
    - ``events``: where a logger writes its events, one JSON line each: ``"stdout"``, or the
      setting (one of its ``paths``) naming the file; the EventLog contract reads them there.
    - ``scenario``: for a wrapper, the contract suite's scenario that reaches its
      own behaviour (``failing``, ``repeated``, ``concurrent``, ``flood`` …).
    - ``shared``: a store whose collections other workers and hosts write too, through a
      server: the root warns when a ``per_process`` stats cache sits over it; a quota count
      every worker shares (what the ``memory`` count's refusal of several workers names).
    - ``bumps_versions``: a store or stats cache that bumps a collection's Redis version on
      each write, so the near-cache above it need not bump it again.
    - ``spends_quota``: a video client whose calls spend the day's YouTube quota: with
      ``--workers`` > 1 and a budget, the ``memory`` quota ledger is refused.
    - ``needs``: the servers its builder reaches beyond the service (``"redis"``: ``REDIS_URL``;
      ``"otlp"``: a collector at ``OTEL_EXPORTER_OTLP_ENDPOINT``). Tests start a server only for
      choices that declare it, and fail a build that reaches an undeclared one.
    - ``preferred``: the slot's default while it is registered, over the slot's own ``default``
      (a slice's entry, the core's default standing in without it: ``--metrics prometheus``).

    The root learns what a choice implies only from these, never from its name.

    Every builder closes what it opens on ``wiring.exits``.
    """

    name: str
    build: B
    doc: str
    wrappers: tuple[str, ...] = ()
    check: Check | None = None
    per_process: tuple[str, str] | None = None
    paths: tuple[str, ...] = ()
    ready: tuple[str, ...] = ()
    silent: bool = False
    events: str = "stdout"
    scenario: str | None = None
    shared: bool = False
    bumps_versions: bool = False
    spends_quota: bool = False
    needs: tuple[str, ...] = ()
    preferred: bool = False

    def problem(self, settings: Settings, instead: str = "") -> str | None:
        """Why this entry cannot run with ``settings`` (exit 2 at start-up), or None; ``instead``:
        what to use when ``per_process`` names nothing (``Slot.instead``)."""
        if self.per_process is not None and settings.workers > 1:
            what, declared = self.per_process
            return (
                f"keeps {what} in each process: with --workers {settings.workers} use {declared or instead}"
            )
        return None if self.check is None else self.check(settings)


class Registry(Generic[B]):
    """Choice names of one slot, in registration order, each with its builder."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._entries: dict[str, Entry[B]] = {}

    def add(self, name: str, doc: str, **declarations: Unpack[Declared]) -> Callable[[B], B]:
        """Register the decorated builder under ``name``."""

        def register(build: B) -> B:
            self.register(name, build, doc, **declarations)
            return build

        return register

    def register(self, name: str, build: B, doc: str, **declarations: Unpack[Declared]) -> None:
        """Register ``build`` under ``name`` (for builders shared by several names)."""
        if name in self._entries:
            raise ValueError(f"{self.what} {name!r} is registered twice")
        entry = Entry(name, build, doc, **declarations)
        unknown = set(entry.paths) - set(declared())
        if unknown:
            raise ValueError(f"{self.what} {name!r} declares paths that are no setting: {sorted(unknown)}")
        self._entries[name] = entry

    def names(self) -> tuple[str, ...]:
        return tuple(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __getitem__(self, name: str) -> Entry[B]:
        return self._entries[name]

    def __iter__(self) -> Iterator[Entry[B]]:
        return iter(self._entries.values())


@dataclass(frozen=True, slots=True)
class Slot:
    """A choice point: ``--<name>`` flag, ``INFLUENCER_STATS_<NAME>`` variable.

    ``wrappers_of`` makes it a list of wrappers (comma-separated, outermost
    first, ``none`` for no wrapper); its default is what the chosen entry of
    slot ``follows`` names, else ``default``. ``same_as`` names a slot whose
    choice is this one's default when this registry has that name too (the
    history kept where the collections are), else ``default``. An entry
    declared ``preferred`` is the default over ``default`` while it is
    registered (a slice's: the core's ``default`` stands in without it).
    """

    name: str
    doc: str
    registry: Registry[Any]
    default: str | None = None
    wrappers_of: str | None = None
    follows: str | None = None
    same_as: str | None = None

    def __post_init__(self) -> None:
        if self.many and NONE in self.registry:
            raise ValueError(f"{self.name}: a wrapper may not be called {NONE!r} (it means no wrapper)")

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def env(self) -> str:
        return PREFIX + self.name.upper()

    @property
    def many(self) -> bool:
        return self.wrappers_of is not None

    def instead(self, name: str) -> str | None:
        """What to use instead of ``name`` with ``--workers`` > 1 (None: it keeps nothing per process):
        what its ``per_process`` names, else this slot's registered choices that keep nothing per
        process (the installed ones: no slice named here), else one worker."""
        declared = self.registry[name].per_process
        if declared is None or declared[1]:
            return None if declared is None else declared[1]
        shared = [entry.name for entry in self.registry if entry.per_process is None]
        if shared:
            return f"{self.flag} {' or '.join(shared)}"
        return f"--workers 1 (no {self.name.replace('_', ' ')} installed is shared between processes)"

    def problem(self, name: str, settings: Settings) -> str | None:
        """Why choice ``name`` cannot run with ``settings`` (``Entry.problem``), or None."""
        return self.registry[name].problem(settings, self.instead(name) or "")

    def default_choice(self) -> str | None:
        """The first registered entry declared ``preferred``, else ``default``."""
        return next((entry.name for entry in self.registry if entry.preferred), self.default)

    def names(self) -> tuple[str, ...]:
        """Every accepted name (wrapper slots accept ``none`` too)."""
        return (NONE, *self.registry.names()) if self.many else self.registry.names()

    def parse(self, raw: str) -> tuple[str, ...]:
        """The names a value stands for; raises ``ValueError`` naming the unknown one."""
        names = (
            tuple(n.strip() for n in raw.split(",") if n.strip() and n.strip() != NONE)
            if self.many
            else (raw,)
        )
        if self.many and len(set(names)) != len(names):
            raise ValueError(f"{self.name.replace('_', ' ')} lists a wrapper twice: {raw[:80]!r}")
        for name in names:
            if name not in self.registry:
                raise ValueError(
                    f"unknown {self.name.replace('_', ' ')} {name[:40]!r}; valid: {', '.join(self.names())}"
                )
        return names
