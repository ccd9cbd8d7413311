"""``main.py``'s command line, derived from the declarations and the registries."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.config.resolve import Resolved, offered, resolve_choices
from influencer_stats.setting_kinds import Secret
from influencer_stats.settings import declared, default_of
from influencer_stats.version import describe

Action = Literal["serve", "list_profiles", "list_choices", "print_settings"]


@dataclass(frozen=True, slots=True)
class CommandLine:
    """What ``main.py`` was asked to do, the flags it was given (setting/slot → value), its ``--env-file``."""

    action: Action
    flags: Mapping[str, str | None]
    env_file: str | None = None


def _environment_help() -> str:
    lines = ["settings (environment variables; flags win over them):"]
    for name, spec in declared().items():
        default = default_of(name)
        lines.append(f"  {spec.env:<40} {spec.kind}, default {shown(default)}: {spec.doc}")
    return "\n".join(lines) + "\n"


def shown(value: object) -> str:
    """A value as it may be printed: secrets masked, a URL's password too."""
    if value is None:
        return "unset"
    if isinstance(value, tuple):  # host:port pairs
        return ",".join(f"[{host}]:{port}" if ":" in host else f"{host}:{port}" for host, port in value)
    if isinstance(value, Secret):
        parts = urlsplit(value.value)
        if parts.scheme and parts.hostname and not parts.password:
            return value.value  # a URL without a password (REDIS_URL's default)
        return "***"
    return str(value)


def parser(prog: str = "main.py") -> argparse.ArgumentParser:
    """The argument parser: one flag per slot and per setting that has one."""
    result = argparse.ArgumentParser(
        prog=prog,
        description="influencer-stats: YouTube statistics for collections of videos.",
        epilog=_environment_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    for name, spec in declared().items():
        if spec.flag is not None:
            result.add_argument(
                spec.flag, dest=name, help=f"{spec.doc} (env {spec.env}, default {default_of(name)})"
            )
    result.add_argument("--version", action="version", version=f"%(prog)s {describe()}")
    result.add_argument("--list-profiles", action="store_true", help="print the profiles and exit")
    result.add_argument(
        "--list-choices", action="store_true", help="print every slot's choices as JSON and exit"
    )
    result.add_argument(
        "--env-file",
        metavar="PATH",
        help="read KEY=VALUE lines (blank and # lines skipped, quotes stripped) into the environment "
        "first; a variable already set in the environment wins over the file",
    )
    result.add_argument(
        "--print-settings",
        action="store_true",
        help="print the resolved settings and their sources, then exit",
    )
    for slot in SLOTS.values():
        many = " (a comma-separated list, outermost first)" if slot.many else ""
        result.add_argument(
            slot.flag, dest=slot.name, help=f"{slot.doc}{many}: {', '.join(slot.names())} (env {slot.env})"
        )
    return result


def parse_command_line(argv: Sequence[str], prog: str = "main.py") -> CommandLine:
    """Parse arguments; argparse itself exits 2 on malformed flags."""
    args = vars(parser(prog).parse_args(list(argv)))
    actions: tuple[Action, ...] = ("list_profiles", "list_choices", "print_settings")
    action: Action = next((a for a in actions if args.pop(a)), "serve")
    env_file = args.pop("env_file")
    return CommandLine(action, args, env_file)


def list_choices() -> str:
    """``{"<slot>": ["<name>", ...], ...}``: every name each slot accepts."""
    return json.dumps({name: list(slot.names()) for name, slot in SLOTS.items()})


def describe_profiles() -> str:
    """A table of every profile offered and its choices (wrapper slots as lists)."""
    header = ("profile", *(name.replace("_", "-") for name in SLOTS), "description")
    rows = []
    for profile in offered().values():
        choices, _ = resolve_choices(profile, {}, {})
        rows.append((profile.name, *(choices.text(name) for name in SLOTS), profile.description))
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in (header, *rows)
    )


def describe_settings(resolved: Resolved) -> str:
    """Every setting and slot: its value (secrets as ***), where it came from, its variable."""
    settings = resolved.settings
    rows = [("setting", "value", "source", "variable")]
    for name, slot in SLOTS.items():
        rows.append((name, settings.choices.text(name), resolved.sources[name], slot.env))
    for name, spec in declared().items():
        value = getattr(settings, name)
        rows.append((name, shown(value), resolved.sources[name], spec.env))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(row[:3], widths, strict=True)) + "  " + row[3] for row in rows
    )
