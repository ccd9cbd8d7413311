"""The version and the source revision a build wrote (``influencer_stats.version``)."""

from __future__ import annotations

import pytest

from influencer_stats import version as module
from influencer_stats.version import describe, revision, revision_in, version


def test_a_checkout_names_its_version_alone() -> None:
    assert revision() == ""  # an editable install: no build wrote a REVISION file
    assert describe() == version()


def test_a_build_that_wrote_a_revision_names_it_after_the_version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(module, "revision", lambda: "1a2b3c4")

    assert describe() == f"{version()} (revision 1a2b3c4)"


@pytest.mark.parametrize(
    ("written", "revision"),
    [
        ("0123456789abcdef0123456789abcdef01234567\n", "0123456789abcdef0123456789abcdef01234567"),
        ("v0.5.0-3-g1a2b3c4", "v0.5.0-3-g1a2b3c4"),
        ("", ""),
        ("\n", ""),
        ("two words", ""),
        ("$(git rev-parse HEAD)", ""),
        ("caf\u00e9", ""),
    ],
)
def test_a_revision_file_is_read_as_one_word_or_nothing(written: str, revision: str) -> None:
    assert revision_in(written) == revision
