"""Granian (RSGI): its workers are processes that import the app by name.

So the resolved choices travel through the environment: ``run`` exports the
profile and every slot, and each worker's factory resolves the same settings.
"""

from __future__ import annotations

import os
from typing import Any

from influencer_stats.config.settings import Settings


def run(settings: Settings) -> None:
    from granian import Granian
    from granian.constants import Interfaces, Loops, TaskImpl
    from granian.log import LogLevels

    from influencer_stats.bootstrap.slots import SLOTS
    from influencer_stats.config.settings import declared

    os.environ[declared()["profile"].env] = settings.profile
    for slot in SLOTS.values():
        os.environ[slot.env] = settings.choices.text(slot.name)
    Granian(
        "influencer_stats.serving.granian:app_from_environment",
        factory=True,
        address=settings.host,
        port=settings.port,
        interface=Interfaces.RSGI,
        workers=1,
        loop=Loops.auto,
        task_impl=TaskImpl(settings.granian_tasks),
        websockets=False,
        backlog=settings.backlog,
        log_level=LogLevels.warning,
        log_access=False,
        workers_kill_timeout=int(settings.graceful_shutdown_s),
    ).serve()


def app_from_environment() -> Any:
    """Granian's factory, called in each worker process: settings from the environment."""
    from influencer_stats.config.resolve import resolve
    from influencer_stats.serving import app_for

    return app_for(resolve(os.environ))
