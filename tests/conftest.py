"""What every suite shares: Hypothesis's profiles (``--hypothesis-profile NAME``)."""

from __future__ import annotations

from hypothesis import settings

#: ``make slices`` runs the unit and contract suites once per removal (sixteen times): a removal
#: changes which code exists, not the properties' inputs, so ten examples a property there; the
#: full hundred run once, in ``make test``'s own pytest.
settings.register_profile("slices", max_examples=10)
