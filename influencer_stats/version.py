"""The service's version: the installed package's, as ``--version`` and ``/openapi.json`` say it,
and the source revision the build was made from, when the build knew it."""

from __future__ import annotations

import functools
from importlib import metadata, resources

#: The distribution's name (pyproject.toml), as installed.
DISTRIBUTION = "influencer-stats"
#: The file a build writes the source revision into, inside the package (the image's build does:
#: ``docker build --build-arg REVISION=$(git rev-parse HEAD)``); absent in a checkout.
REVISION_FILE = "REVISION"


def version() -> str:
    """The installed package's version, or a note that it was never installed (run from a checkout)."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


@functools.cache
def revision() -> str:
    """The source revision the build wrote into the package, or "" when it wrote none.

    A checkout's editable install has none: its revision moves with every commit, so a figure
    written at install would soon be wrong, and a wrong revision is worse than none.
    """
    try:
        return revision_in(resources.files("influencer_stats").joinpath(REVISION_FILE).read_text("ascii"))
    except (FileNotFoundError, UnicodeDecodeError):
        return ""


def revision_in(written: str) -> str:
    """The revision a REVISION file holds: one word of letters, digits, ``-`` and ``.`` (a commit,
    a tag), else "": a stray line is never shown as a revision."""
    text = written.strip()
    return text if text.isascii() and text.replace("-", "").replace(".", "").isalnum() else ""


def describe() -> str:
    """The version, and the revision when the build knew it: ``0.5.0 (revision 1a2b3c4)``."""
    known = revision()
    return f"{version()} (revision {known})" if known else version()
