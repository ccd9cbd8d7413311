"""YouTube's quota day, which the settings (its default and bound) and the governor share."""

from __future__ import annotations

from typing import Final
from zoneinfo import ZoneInfo

#: YouTube's quota day resets at midnight Pacific time (REFERENCE.md).
PACIFIC: Final = ZoneInfo("America/Los_Angeles")
#: A quota day of this length is YouTube's own (midnight to midnight Pacific): the setting's
#: default and its most.
YOUTUBE_DAY_S: Final = 86_400
