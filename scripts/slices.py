"""Remove the service's slices, and prove each can go (``make slices``).

    python scripts/slices.py list                 every installed slice and its files
    python scripts/slices.py files NAME           the files removing NAME deletes (its joints' too)
    python scripts/slices.py remove NAME... DEST  a copy of the checkout without them, in DEST
    python scripts/slices.py check [NAME...]      remove each alone, then all, and run the checks
    python scripts/slices.py skeleton DEST [--keep NAME,…]  a new repository: the core, and the slices kept

A removal is what ARCHITECTURE.md says by hand: delete the files the slice declares
(``SLICE.files`` in ``influencer_stats/bootstrap/slices/<name>.py``, that module among them, and
those of its joints with another slice: ``<name>__<other>.py`` or ``<other>__<name>.py``, each
declaring ``JOINT``) and its one line in ``INSTALLED``, then regenerate the configuration tables. ``check`` does it in a
scratch copy, then looks for any file left that still names one of the slice's modules (and
names it), then runs ruff, mypy (strict), lint-imports and the unit and contract suites on what
is left, two removals at a time. It fails when any removal fails, or when the whole uses more than
``--budget`` seconds of CPU (1,200: 16 removals used 724 s, about ten minutes of wall time on two
quiet cores). CPU, not wall time: neighbours on a shared machine doubled the wall time, not the cost.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Final

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SLICES = Path("influencer_stats/bootstrap/slices")
#: What a copy leaves out: the venv, caches, and what git ignores anyway.
LEFT_OUT = {".git", ".venv", ".ruff_cache", ".pytest_cache", "__pycache__", "node_modules", ".mypy_cache"}
#: What a removal leaves behind: each removed slice's name and the files it declared, one line
#: each (``name: pattern pattern …``), for what may still name them (the perf record).
REMOVED = SLICES / "removed.txt"
#: What is searched for a module name that outlived its slice.
SEARCHED = {".py", ".toml", ".cfg", ".ini", ".yaml", ".yml"}


@dataclass(frozen=True)
class Declared:
    name: str
    doc: str
    files: tuple[str, ...]
    modules: tuple[str, ...]
    shared: tuple[str, ...] = ()
    #: The joints it is part of (``slice.Joint``: what it is only with another slice installed),
    #: each declared as a slice named ``<a>__<b>``: removed with it, whichever of the two goes.
    joints: tuple[Declared, ...] = ()


def installed(root: Path) -> list[Declared]:
    """The slices installed in the checkout at ``root``, read by importing its list there."""
    code = (
        "import json\n"
        "from influencer_stats.bootstrap.slices import joints, load\n"
        "slices = [[s.name, s.doc, list(s.files), list(s.modules), list(s.shared)] for s in load()]\n"
        "joined = [[j.name, j.doc, list(j.files), list(j.modules), list(j.of)] for j in joints()]\n"
        "print(json.dumps([slices, joined]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        check=True,
    )
    slices, joined = json.loads(done.stdout)
    joints = [(Declared(n, d, tuple(f), tuple(m)), set(of)) for n, d, f, m, of in joined]
    return [
        Declared(n, d, tuple(f), tuple(m), tuple(sh), tuple(j for j, of in joints if n in of))
        for n, d, f, m, sh in slices
    ]


def files_of(root: Path, declared: Declared, *, present: bool = False) -> list[Path]:
    """Every file (relative to ``root``) removing the slice deletes: what it declares, its module,
    and its joints' (those still there: a joint goes with the first of its two slices removed).
    ``present``: only the files there, no pattern required to match (a joint's, once gone).

    A file two slices declare (a test of both) goes with the first removed: a pattern that matches
    nothing is refused unless a slice removed before (``REMOVED``) declared it too."""
    found = {SLICES / f"{declared.name}.py"}
    record = root / REMOVED
    gone = set(record.read_text().split()) if record.is_file() else set()
    for pattern in declared.files:
        matched = sorted(root.glob(pattern))
        if not matched and (present or pattern in gone):
            continue
        if not matched:
            raise SystemExit(f"slice {declared.name}: {pattern!r} matches no file")
        for path in matched:
            walked = [p for p in path.rglob("*") if p.is_file()] if path.is_dir() else [path]
            found |= {p.relative_to(root) for p in walked if "__pycache__" not in p.parts}
    for joint in declared.joints:
        found |= set(files_of(root, joint, present=True))
    return sorted(p for p in found if not present or (root / p).exists())


def copy_checkout(dest: Path) -> None:
    """The checkout's files as git sees them (tracked, or new and not ignored: no venv, no
    ``data/``), as they are now in the working tree, copied to ``dest``; outside a git checkout
    (an unpacked archive), every file but ``LEFT_OUT``."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
        )
    except FileNotFoundError:  # no git at all
        listed = subprocess.CompletedProcess([], 1, b"", b"")
    if listed.returncode != 0:

        def ignored(_: str, names: list[str]) -> set[str]:
            return {n for n in names if n in LEFT_OUT or n.endswith(".pyc")}

        shutil.copytree(ROOT, dest, ignore=ignored, symlinks=True, dirs_exist_ok=True)
        return
    for name in sorted(set(filter(None, listed.stdout.decode().split("\0")))):
        source = ROOT / name
        if not source.is_file() or LEFT_OUT & set(Path(name).parts):
            continue  # deleted in the working tree, or a cache git does not ignore
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, dest / name, follow_symlinks=False)


def first_commit(dest: Path, message: str) -> None:
    """``dest`` a git repository of its own, everything in it committed once."""
    me = ("-c", "user.name=influencer-stats skeleton", "-c", "user.email=skeleton@localhost")
    for argv in (["init", "-q"], ["add", "-A"], [*me, "commit", "-q", "-m", message]):
        subprocess.run(["git", *argv], cwd=dest, check=True)


def package_lines(root: Path) -> int:
    """Lines of the service's package (its ``.py`` files) in the checkout at ``root``."""
    return sum(len(p.read_text().splitlines()) for p in (root / "influencer_stats").rglob("*.py"))


def marked(name: str, comment: tuple[str, str] = ("<!--", " -->")) -> re.Pattern[str]:
    """A part of a file that is slice ``name``'s: in a page from ``<!-- slice NAME …-->`` to
    ``<!-- /slice NAME -->``, in a script (``comment`` ``("#", "")``) from ``# slice NAME …`` to ``# /slice NAME``."""
    opening, closing = (re.escape(part) for part in comment)
    name = re.escape(name)
    return re.compile(rf"{opening} slice {name}\b.*?{opening} /slice {name}{closing}\n?", re.DOTALL)


#: The files whose parts a slice may mark as its, by comment style: the pages, and the test script
#: (the tool a slice installs for its suites, e.g. ``scripts/prometheus-up.sh``).
MARKED_FILES: Final = {("<!--", " -->"): ("*.md", "docs/*.md"), ("#", ""): ("scripts/test",)}


def remove(dest: Path, slices: Sequence[Declared]) -> None:
    """Delete each slice's files, its line in ``INSTALLED`` and the parts of the pages marked as its
    (``marked``) in ``dest``, note them in ``REMOVED``; regenerate the tables. A file several slices
    share (``Slice.shared``) goes once every slice declaring it is removed; a joint of two
    (``slice.Joint``) with the first of them (``files_of``)."""
    everyone = installed(dest)
    for declared in slices:
        for path in files_of(dest, declared):
            (dest / path).unlink()
        listing = dest / SLICES / "__init__.py"
        line = re.compile(rf'^ *"{re.escape(declared.name)}",.*\n', re.MULTILINE)
        text = listing.read_text()
        if len(line.findall(text)) != 1:
            raise SystemExit(f'slice {declared.name}: not one line "{declared.name}", in {listing}')
        listing.write_text(line.sub("", text))
        for comment, patterns in MARKED_FILES.items():
            for page in [path for pattern in patterns for path in dest.glob(pattern)]:
                page.write_text(marked(declared.name, comment).sub("", page.read_text()))
        joined = [str(SLICES / f"{j.name}.py") for j in declared.joints] + [
            pattern for j in declared.joints for pattern in j.files
        ]
        with (dest / REMOVED).open("a") as record:
            record.write(
                f"{declared.name}: {' '.join((str(SLICES / f'{declared.name}.py'), *declared.files, *joined))}\n"
            )
    gone = {declared.name for declared in slices}
    for pattern in sorted({pattern for declared in everyone for pattern in declared.shared}):
        sharing = [declared.name for declared in everyone if pattern in declared.shared]
        if all(name in gone for name in sharing):
            for path in sorted(dest.glob(pattern)):
                path.unlink()
            with (dest / REMOVED).open("a") as record:  # the perf record may still name it too
                record.write(f"{'+'.join(sharing)}: {pattern}\n")
    for folder in sorted({p for p in dest.rglob("*") if p.is_dir()}, reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()
    env = {**os.environ, "PYTHONPATH": str(dest)}
    subprocess.run(
        [sys.executable, "-m", "influencer_stats.config.docs"],
        cwd=dest,
        env=env,
        check=True,
        capture_output=True,
    )


def still_naming(dest: Path, slices: Iterable[Declared]) -> list[str]:
    """``path:line: text`` for every line left in ``dest`` that names a removed slice's module, or
    one of its joints'."""
    modules = [m for s in slices for m in (*s.modules, *(m for j in s.joints for m in j.modules))]
    if not modules:
        return []
    pattern = re.compile(
        "|".join(rf"\b{re.escape(m)}\b|\b{re.escape(m.replace('.', '/'))}\b" for m in modules)
    )
    hits: list[str] = []
    for path in sorted(dest.rglob("*")):
        if path.suffix not in SEARCHED or not path.is_file() or LEFT_OUT & set(path.parts):
            continue
        for number, text in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if pattern.search(text):
                hits.append(f"{path.relative_to(dest)}:{number}: {text.strip()}")
    return hits


CHECKS = (
    ("ruff", ["ruff", "check", "--no-cache", "."]),
    ("ruff format", ["ruff", "format", "--no-cache", "--check", "."]),
    ("mypy", ["mypy"]),
    ("lint-imports", ["lint-imports", "--no-cache"]),
    # test_slices copies and removes the checkout again for each slice left (15 s a copy): the
    # removals here are that check.
    (
        "unit",
        [
            "python",
            "-m",
            "pytest",
            "-q",
            "-x",
            "-p",
            "no:cacheprovider",
            "--hypothesis-profile=slices",  # ten examples a property (tests/conftest.py)
            "tests/unit",
            "--ignore=tests/unit/test_slices.py",
        ],
    ),
    (
        "contract",
        [
            *("python", "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "--hypothesis-profile=slices"),
            *("tests/contract", "-k", "not redis"),
        ],
    ),
)


def check_one(snapshot: Path, slices: Sequence[Declared], label: str) -> tuple[str, bool, str, float]:
    """Remove ``slices`` in a scratch copy of ``snapshot`` and run every check there: (label, passed,
    why, seconds)."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"slices-{label}-") as scratch:
        dest = Path(scratch) / "checkout"
        shutil.copytree(snapshot, dest, symlinks=True)
        remove(dest, slices)
        hits = still_naming(dest, slices)
        if hits:
            return (
                label,
                False,
                "still reaches into the slice:\n    " + "\n    ".join(hits),
                time.monotonic() - started,
            )
        env = {**os.environ, "PYTHONPATH": str(dest)}
        for name, argv in CHECKS:
            done = subprocess.run(
                [str(BIN / argv[0]), *argv[1:]],
                cwd=dest,
                env=env,
                capture_output=True,
                text=True,
                timeout=900,
            )
            if done.returncode != 0:
                tail = (done.stdout + done.stderr).strip().splitlines()[-25:]
                return label, False, f"{name} failed:\n    " + "\n    ".join(tail), time.monotonic() - started
    return label, True, "", time.monotonic() - started


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list")
    files = commands.add_parser("files")
    files.add_argument("name")
    removing = commands.add_parser("remove")
    removing.add_argument("names", nargs="+")
    removing.add_argument("dest", type=Path)
    skeleton = commands.add_parser("skeleton")
    skeleton.add_argument("dest", type=Path)
    skeleton.add_argument(
        "--keep", default="", help="slices to keep, comma-separated (make skeleton SLICES=…)"
    )
    checking = commands.add_parser("check")
    checking.add_argument("names", nargs="*")
    checking.add_argument("--jobs", type=int, default=2)
    checking.add_argument("--budget", type=float, default=1200.0, help="seconds of CPU the whole may use")
    args = parser.parse_args(argv)

    every = {s.name: s for s in installed(ROOT)}

    def named(names: Sequence[str] | dict[str, Declared]) -> list[Declared]:
        unknown = sorted(set(names) - set(every))
        if unknown:
            parser.error(f"no slice {', '.join(unknown)}; installed: {', '.join(every)}")
        return [every[n] for n in names]

    if args.command == "list":
        for s in every.values():
            print(f"{s.name}: {s.doc}\n    " + "\n    ".join(str(p) for p in files_of(ROOT, s)))
        return 0
    if args.command == "files":
        print("\n".join(str(p) for p in files_of(ROOT, named([args.name])[0])))
        return 0
    if args.command in ("remove", "skeleton"):
        kept = named([n for n in getattr(args, "keep", "").split(",") if n])
        removed = (
            named(args.names) if args.command == "remove" else [s for s in every.values() if s not in kept]
        )
        if args.dest.exists() and any(args.dest.iterdir()):
            parser.error(f"{args.dest} is not empty")
        copy_checkout(args.dest)
        remove(args.dest, removed)
        print(f"{args.dest}: the checkout without {', '.join(s.name for s in removed)}")
        if args.command == "skeleton":
            first_commit(
                args.dest, f"A service from the influencer-stats skeleton, without {len(removed)} slices"
            )
            print(f"  the package: {package_lines(ROOT):,} lines here, {package_lines(args.dest):,} there")
            print(f"  a new repository, one commit; next: cd {args.dest} && make install && make unit")
        return 0

    chosen = named(args.names or every)
    runs = [([s], s.name) for s in chosen]
    if len(chosen) > 1:
        runs.append((chosen, "all"))
    started = time.monotonic()
    failed = 0
    with tempfile.TemporaryDirectory(prefix="slices-snapshot-") as scratch:
        # The checkout as it is now, once: the tests that may run beside this check (make test)
        # write files into the checkout, and no copy taken later must see them.
        snapshot = Path(scratch) / "checkout"
        copy_checkout(snapshot)
        if (ROOT / ".mypy_cache").is_dir():  # unchanged modules stay checked: seconds, not a minute
            shutil.copytree(ROOT / ".mypy_cache", snapshot / ".mypy_cache")
        # Bytecode once for every copy (a removal's edited files alone compile again).
        subprocess.run([str(BIN / "python"), "-m", "compileall", "-q", "-j", "0", str(snapshot)], check=False)
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for label, passed, why, seconds in pool.map(lambda run: check_one(snapshot, *run), runs):
                print(
                    f"{'ok  ' if passed else 'FAIL'} without {label} ({seconds:.0f} s)"
                    + ("" if passed else f": {why}"),
                    flush=True,
                )
                failed += not passed
    took = time.monotonic() - started
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = used.ru_utime + used.ru_stime
    over = cpu > args.budget
    print(
        f"{len(runs) - failed} of {len(runs)} removals pass, in {took:.0f} s"
        f" ({cpu:.0f} s of CPU; budget {args.budget:.0f} s of CPU)"
    )
    if over:
        print(
            f"over the budget: {cpu:.0f} s of CPU > {args.budget:.0f} s (--budget, or fewer, faster checks)"
        )
    return 1 if failed or over else 0


if __name__ == "__main__":
    sys.exit(main())
