"""Run influencer-stats: ``python main.py [--profile NAME] [--port P] [--workers N] [--<slot> NAME]``.

``python main.py --help`` lists every flag and setting. ``uvicorn main:app``
works too, from the checkout, as ``uvicorn influencer_stats.asgi:app`` does
anywhere the package is installed (``influencer_stats/asgi.py`` says how it
matches ``python main.py``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from influencer_stats.__main__ import run


def main(argv: Sequence[str] | None = None) -> int:
    """What ``influencer-stats`` and ``python -m influencer_stats`` do, named ``main.py``."""
    return run(argv, prog="main.py")


def __getattr__(name: str) -> Any:
    """``main:app`` for ``uvicorn main:app`` (from the checkout): ``influencer_stats.asgi``'s app."""
    if name != "app":
        raise AttributeError(name)
    from influencer_stats.asgi import create_app

    app = globals()["app"] = create_app(prog="main:app")  # uvicorn looks it up twice: build it once
    return app


if __name__ == "__main__":
    sys.exit(main())
