"""The double's command line: parse the options and serve until interrupted."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from aiohttp import web

from youtube_double.app import create_app
from youtube_double.state import MAX_STALL_SECONDS, DoubleState
from youtube_double.wire import VIDEOS_PATH


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry point (``python -m youtube_double``)."""
    parser = argparse.ArgumentParser(
        prog="python -m youtube_double",
        description="YouTube Data API double: videos.list, playlistItems.list and channels.list",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8081)
    parser.add_argument("--require-key", default=None, help="the X-Goog-Api-Key every list call must carry")
    parser.add_argument("--latency-ms", type=int, default=0, help="fixed delay per call of any list method")
    parser.add_argument(
        "--stall-seconds",
        type=float,
        default=30.0,
        help=f"default duration of the 'stall' fault (0..{MAX_STALL_SECONDS:g})",
    )
    args = parser.parse_args(argv)
    state = DoubleState(default_stall_seconds=args.stall_seconds)
    app = create_app(state, require_key=args.require_key, latency_ms=args.latency_ms)

    def announce(*_: object) -> None:
        print(
            f"youtube double: http://{args.host}:{args.port}{VIDEOS_PATH}",
            flush=True,
        )

    web.run_app(
        app,
        host=args.host,
        port=args.port,
        access_log=None,
        shutdown_timeout=2.0,
        print=announce,
    )
