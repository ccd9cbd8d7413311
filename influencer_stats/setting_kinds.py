"""The kinds of setting and how each is read: an integer, seconds, text, a URL, a secret; and
the choices (``Choices``: the names chosen per slot).

``settings.Settings`` declares each field with one of these helpers, which
attach a ``Spec`` (variable, flag, parser, bounds, doc) to the field; parsing,
validation (exit 2 naming the variable), ``--help``, ``--print-settings`` and
the settings table read it back through ``settings.declared()``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit

#: The most seconds a duration setting takes unless it says less: a day. Beyond it no
#: timeout, TTL or grace period means anything here, and servers hand these to C and Rust
#: timers as whole seconds or milliseconds (1e308 s crashed Granian's shutdown).
MAX_SECONDS: Final = 86_400
#: The most an integer setting takes unless it says less: every value then fits the 32-bit
#: integers of the C and Rust code some reach (a listen backlog, a parser's limits) and
#: converts to a float exactly (a rate, a gauge).
MAX_INTEGER: Final = 1_000_000_000
#: A host name, an IPv4 address, or an IPv6 address (written in brackets before its port).
_HOST: Final = re.compile(r"[A-Za-z0-9._-]+|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*")
#: The levels of an ``EventLog`` event, least severe first (a log level setting takes one).
LOG_LEVELS: Final = ("debug", "info", "warning", "error")


@dataclass(frozen=True, slots=True)
class Secret:
    """A value that never appears in a repr, a log line or an error."""

    value: str = field(repr=False)

    def __repr__(self) -> str:
        return "Secret('***')"


@dataclass(frozen=True, slots=True)
class Spec:
    """How one setting is read: its variable, flag, parser and doc."""

    env: str
    doc: str
    parse: Callable[[str], object]
    kind: str  # for --help and docs/configuration.md: "integer 1-65535", "seconds > 0", "text" …
    flag: str | None = None
    secret: bool = False


def _declare(default: Any, spec: Spec) -> Any:
    return field(default=default, metadata={"spec": spec})


def _bounded(name: str, value: int | float, low: int | None, high: int | None) -> None:
    # An int is finite (and math.isfinite could not convert one past 1e308 to check).
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number")
    if low is not None and value < low:
        positive = low == 1 and isinstance(value, int)  # 0.5 s is positive, yet under 1
        raise ValueError(f"{name} must be {'positive' if positive else f'at least {low:,}'}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be at most {high:,}")


def integer(
    env: str, default: int, doc: str, *, low: int = 1, high: int = MAX_INTEGER, flag: str | None = None
) -> int:
    """A whole number within [low, high]."""

    def parse(raw: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            raise ValueError(f"{env} must be a whole number") from None
        _bounded(env, value, low, high)
        return value

    result: int = _declare(default, Spec(env, doc, parse, f"integer {low:,}–{high:,}", flag))
    return result


def seconds(env: str, default: float, doc: str, *, low: int | None = None, high: int = MAX_SECONDS) -> float:
    """A number of seconds, positive (at least ``low`` when given) and at most ``high``."""

    def parse(raw: str) -> float:
        try:
            value = float(raw)
        except ValueError:
            raise ValueError(f"{env} must be a number of seconds") from None
        _bounded(env, value, low, high)
        if value <= 0:
            raise ValueError(f"{env} must be positive")
        return value

    kind = f"seconds {low:,}–{high:,}" if low is not None else f"seconds > 0, ≤ {high:,}"
    result: float = _declare(default, Spec(env, doc, parse, kind))
    return result


def text(env: str, default: str, doc: str, *, flag: str | None = None) -> str:
    """Any non-empty text."""
    result: str = _declare(default, Spec(env, doc, str, "text", flag))
    return result


def optional_text(env: str, doc: str) -> str | None:
    """Text, unset by default."""
    result: str | None = _declare(None, Spec(env, doc, str, "text"))
    return result


def one_of(env: str, default: str, doc: str, options: tuple[str, ...], *, flag: str | None = None) -> str:
    """One of a closed set of words, in any case (``INFO`` is ``info``)."""
    by_case = {option.casefold(): option for option in options}

    def parse(raw: str) -> str:
        found = by_case.get(raw.casefold())
        if found is None:
            raise ValueError(f"{env} must be {' or '.join(options)}")
        return found

    result: str = _declare(default, Spec(env, doc, parse, "/".join(options), flag))
    return result


def url(env: str, default: str, doc: str, *, schemes: tuple[str, ...], secret: bool = False) -> Any:
    """A URL with one of ``schemes``; a secret one (it may carry a password) is a ``Secret``."""

    def parse(raw: str) -> object:
        if not raw.startswith(tuple(f"{s}://" for s in schemes)):
            raise ValueError(f"{env} must be a {'/'.join(schemes)} URL")
        try:
            urlsplit(raw).port  # noqa: B018 - read for its check: a port outside 0-65535 raises
        except ValueError:
            raise ValueError(f"{env} must be a {'/'.join(schemes)} URL with a port from 0 to 65535") from None
        return Secret(raw) if secret else raw

    return _declare(Secret(default) if secret else default, Spec(env, doc, parse, "URL", secret=secret))


def addresses(env: str, doc: str) -> tuple[tuple[str, int], ...] | None:
    """``host:port`` pairs separated by commas (``[::1]:port`` for IPv6), unset by default."""

    def parse(raw: str) -> tuple[tuple[str, int], ...]:
        found = []
        for item in raw.split(","):
            host, _, port = item.strip().rpartition(":")
            host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
            if not _HOST.fullmatch(host) or not port.isdigit() or not 0 < int(port) <= 65_535:
                raise ValueError(f"{env} must be host:port pairs separated by commas")
            found.append((host, int(port)))
        return tuple(found)

    result: tuple[tuple[str, int], ...] | None = _declare(None, Spec(env, doc, parse, "host:port,…"))
    return result


#: An origin as a browser sends it: scheme, host, and a port when not the scheme's.
_ORIGIN: Final = re.compile(r"https?://(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?")


def origins(env: str, doc: str) -> str | None:
    """Web origins separated by commas (``https://app.example.com,http://localhost:3000``), or
    ``*`` for any; unset by default. Kept as the normalized list's text (lower case, no spaces)."""

    def parse(raw: str) -> str:
        items = [item.strip().lower() for item in raw.split(",") if item.strip()]
        if items == ["*"]:
            return "*"
        if not items or not all(_ORIGIN.fullmatch(item) for item in items):
            raise ValueError(
                f"{env} must be origins (scheme://host[:port], no path) separated by commas, or *"
            )
        return ",".join(dict.fromkeys(items))

    result: str | None = _declare(None, Spec(env, doc, parse, "origins,… or *"))
    return result


def secret(env: str, doc: str) -> Secret | None:
    """A credential, unset by default; never printed."""
    result: Secret | None = _declare(None, Spec(env, doc, Secret, "secret", secret=True))
    return result


@dataclass(frozen=True, slots=True)
class Choices(Mapping[str, tuple[str, ...]]):
    """The chosen names per slot: one name for a base slot, the wrappers for a wrapper slot."""

    names: Mapping[str, tuple[str, ...]]

    def __getitem__(self, slot: str) -> tuple[str, ...]:
        return self.names[slot]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def one(self, slot: str) -> str:
        """The name chosen for a base slot."""
        (name,) = self.names[slot]
        return name

    def text(self, slot: str) -> str:
        """As a user writes it: ``aiohttp``, ``breaker,rate-limit`` or ``none``."""
        return ",".join(self.names[slot]) or "none"
