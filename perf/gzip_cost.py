"""gzip's cost per answer size and zlib level, in this process: bytes out and CPU µs per body.

    python -m perf.gzip_cost

CPU time (``time.process_time``), the median of 5 repetitions; the bodies are collections of
80, 1,000 and 5,000 ids as ``GET /collections/{id}`` answers them, and the OpenAPI document.
perf/RESULTS.md, "gzip, CORS and the access log", reads it.
"""

from __future__ import annotations

import statistics
import time
import zlib
from collections.abc import Callable

import orjson

from influencer_stats.bootstrap.edge import openapi

LEVELS = (1, 6)


def cpu_us(work: Callable[[], object], times: int) -> float:
    """Median CPU µs of one call of ``work`` over 5 runs of ``times`` calls."""
    runs = []
    for _ in range(5):
        started = time.process_time()
        for _ in range(times):
            work()
        runs.append((time.process_time() - started) / times * 1e6)
    return statistics.median(runs)


def main() -> None:
    bodies = {
        f"collection of {count:,} ids": orjson.dumps({"videos": [f"v{n:010d}" for n in range(count)]})
        for count in (80, 1_000, 5_000)
    }
    bodies["OpenAPI document"] = openapi(5_000)
    print("| body | bytes | " + " | ".join(f"level {level}: bytes, µs" for level in LEVELS) + " |")
    print("|---|---:|" + "---:|" * len(LEVELS))
    for name, body in bodies.items():
        times = max(20, 2_000_000 // len(body))
        cells = []
        for level in LEVELS:

            def compress(body: bytes = body, level: int = level) -> bytes:
                return zlib.compress(body, level, wbits=31)

            cells.append(f"{len(compress()):,}, {cpu_us(compress, times):.0f}")
        print(f"| {name} | {len(body):,} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
