"""The service's version: the installed package's, as ``--version`` and ``/openapi.json`` say it."""

from __future__ import annotations

from importlib import metadata

#: The distribution's name (pyproject.toml), as installed.
DISTRIBUTION = "influencer-stats"


def version() -> str:
    """The installed package's version, or a note that it was never installed (run from a checkout)."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"
