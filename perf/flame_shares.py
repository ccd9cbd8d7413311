"""Where a flame graph's samples go, by function, and what one graph has that another has not.

Reads the SVG ``py-spy record --format flamegraph`` writes (the lab's ``flames/flame-*.svg``,
:mod:`perf.flame`): every frame is a ``<g>`` with its name, depth (``y``) and samples
(``fg:x``/``fg:w``). A function's *share* is the fraction of all samples whose stack holds it
(a frame nested in another frame of the same function counts once); its *self* share, the
fraction in which it is the innermost frame. Line numbers are dropped, so a function is one
row whatever line its samples were on (``--lines``: a row per line). With ``--requests N`` (the requests wrk completed while
py-spy sampled, and its ``--rate``), a share is also µs of sampled time per request: a lower
bound, since py-spy's ``--nonblocking`` sampling loses the root of some stacks::

    python -m perf.flame_shares perf/out/flames/flame-fast.svg --top 30
    python -m perf.flame_shares A.svg B.svg --top 40 --match influencer_stats   # A beside B
"""

from __future__ import annotations

import argparse
import html
import re
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

_FRAME: Final = re.compile(
    r'<g><title>(?P<title>[^<]*)</title><rect [^>]*?y="(?P<y>[\d.]+)"[^>]*?fg:x="(?P<x>\d+)" fg:w="(?P<w>\d+)"'
)
_SAMPLES_SUFFIX: Final = re.compile(r" \([\d,]+ samples?, [\d.]+%\)$")
_LINE: Final = re.compile(r":\d+\)$")


@dataclass(frozen=True, slots=True)
class Frame:
    key: str
    depth: float
    x: int
    w: int


@dataclass(frozen=True, slots=True)
class Shares:
    """Samples in all, and per function: samples whose stack holds it, and where it is innermost."""

    total: int
    inclusive: dict[str, int]
    own: dict[str, int]

    def share(self, key: str) -> float:
        return self.inclusive.get(key, 0) / self.total if self.total else 0.0

    def self_share(self, key: str) -> float:
        return self.own.get(key, 0) / self.total if self.total else 0.0


def function_key(title: str, *, lines: bool = False) -> str:
    """``Foo.bar (pkg/mod.py:12) (3 samples, 1.2%)`` → ``Foo.bar (pkg/mod.py)`` (``lines``: ``…:12)``)."""
    name = _SAMPLES_SUFFIX.sub("", html.unescape(title))
    return name if lines else _LINE.sub(")", name)


def frames(svg: str, *, lines: bool = False) -> list[Frame]:
    return [
        Frame(function_key(m["title"], lines=lines), float(m["y"]), int(m["x"]), int(m["w"]))
        for m in _FRAME.finditer(svg)
    ]


def shares(svg: str, *, lines: bool = False) -> Shares:
    """Inclusive and self samples per function (``lines``: per function and line) of one flame graph."""
    found = frames(svg, lines=lines)
    if not found:
        return Shares(0, {}, {})
    top = min(f.depth for f in found)
    total = sum(f.w for f in found if f.depth == top)
    # A stack's frames nest: children lie within their parent's samples, one level deeper. Visited
    # in order of position, then depth, the open frames are exactly a frame's ancestors.
    ordered = sorted(found, key=lambda f: (f.x, f.depth))
    inclusive: Counter[str] = Counter()
    children: Counter[int] = Counter()
    open_frames: list[tuple[Frame, int]] = []
    on_stack: Counter[str] = Counter()
    for index, frame in enumerate(ordered):
        while open_frames and (
            open_frames[-1][0].x + open_frames[-1][0].w <= frame.x or open_frames[-1][0].depth >= frame.depth
        ):
            closed, _ = open_frames.pop()
            on_stack[closed.key] -= 1
        if open_frames:
            children[open_frames[-1][1]] += frame.w
        if on_stack[frame.key] <= 0:  # not inside another frame of the same function
            inclusive[frame.key] += frame.w
        open_frames.append((frame, index))
        on_stack[frame.key] += 1
    own: Counter[str] = Counter()
    for index, frame in enumerate(ordered):
        own[frame.key] += frame.w - children[index]
    return Shares(total, dict(inclusive), dict(own))


def _row(key: str, graphs: Sequence[Shares], us_per_sample: Sequence[float | None]) -> list[str]:
    cells = []
    for graph, per in zip(graphs, us_per_sample, strict=True):
        cells += [f"{graph.share(key) * 100:5.1f}%", f"{graph.self_share(key) * 100:5.1f}%"]
        if per is not None:
            cells.append(f"{graph.inclusive.get(key, 0) * per:6.1f}")
    return cells


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.flame_shares", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "svg", nargs="+", type=Path, help="one flame graph, or two: the first beside the second"
    )
    parser.add_argument("--top", type=int, default=40, help="rows, by the first graph's share (40)")
    parser.add_argument("--match", default="", help="only functions whose name or file matches this regex")
    parser.add_argument(
        "--requests", type=int, nargs="*", default=[], help="requests completed while each graph was sampled"
    )
    parser.add_argument("--rate", type=float, default=100.0, help="py-spy's samples per second (100)")
    parser.add_argument(
        "--lines", action="store_true", help="one row per function and line, not per function"
    )
    args = parser.parse_args(argv)
    if len(args.svg) > 2:
        parser.error("one or two flame graphs")
    if args.requests and len(args.requests) != len(args.svg):
        parser.error("--requests takes one number per flame graph")
    graphs = [shares(path.read_text(), lines=args.lines) for path in args.svg]
    per_sample: list[float | None] = (
        [1e6 / args.rate / n for n in args.requests] if args.requests else [None] * len(graphs)
    )
    pattern = re.compile(args.match)
    keys = sorted(
        {k for g in graphs for k in g.inclusive if pattern.search(k)},
        key=lambda k: (-graphs[0].share(k), -(graphs[-1].share(k)), k),
    )[: args.top]
    columns = ["share", "self"] + (["µs/req"] if args.requests else [])
    header = [f"{path.stem} {c}" for path in args.svg for c in columns]
    print(" | ".join([*header, "function"]))
    for key in keys:
        print(" | ".join([*_row(key, graphs, per_sample), key]))
    print(" | ".join(f"{path.stem}: {g.total:,} samples" for path, g in zip(args.svg, graphs, strict=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
