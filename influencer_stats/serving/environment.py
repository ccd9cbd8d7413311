"""What worker processes inherit from the process that starts them: the settings, through the environment.

Worker processes (Granian's, and the ``workers`` slice's for uvicorn and
aiohttp) start from a fresh interpreter and build their app themselves, so
the parent exports what it resolved from its command line and each worker
resolves the same settings from its environment: one mechanism for every
server.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from dataclasses import replace

from influencer_stats.settings import Settings, declared


def export(settings: Settings, environ: MutableMapping[str, str] = os.environ) -> None:
    """Put in ``environ`` what only the command line may have said: the profile, every flag, every slot.

    Every other setting is read from the environment alone, so a worker finds it there already.
    """
    from influencer_stats.bootstrap.slots import SLOTS

    for name, spec in declared().items():
        if spec.flag is not None and not spec.secret:
            environ[spec.env] = str(getattr(settings, name))
    for slot in SLOTS.values():
        environ[slot.env] = settings.choices.text(slot.name)


def settings_from_environment() -> Settings:
    """The settings a worker process runs with (its parent exported them)."""
    from influencer_stats.config.resolve import resolve

    return resolve(os.environ)


@contextmanager
def metrics_directory(
    settings: Settings, environ: MutableMapping[str, str] = os.environ
) -> Iterator[Settings]:
    """``settings`` with a directory where several workers share their metrics, for the run.

    The user's ``PROMETHEUS_MULTIPROC_DIR`` if set (left in place), else a fresh
    private one, exported for the workers and removed when the block ends. One
    worker needs none.
    """
    if settings.workers == 1 or settings.prometheus_multiproc_dir:
        yield settings
        return
    variable = declared()["prometheus_multiproc_dir"].env
    path = tempfile.mkdtemp(prefix="influencer-stats-metrics-")  # mode 0700
    environ[variable] = path
    try:
        yield replace(settings, prometheus_multiproc_dir=path)
    finally:
        environ.pop(variable, None)
        shutil.rmtree(path, ignore_errors=True)
