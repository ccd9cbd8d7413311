"""How long a per-video cache serves an entry: fresh, stale while revalidating, in place of a failure."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from influencer_stats.domain.models import CacheInfo, VideoEntry, VideoId
from influencer_stats.interpreters.stats.cache import CachePolicy


@dataclass(frozen=True, slots=True)
class Freshness:
    """The per-video cache's windows, by an entry's age.

    - Fresh for ``policy.ttl_s`` times ``stretch()`` (the quota budget's say:
      1 unless spending runs ahead of the day).
    - Then, for ``policy.stale_while_revalidate_s`` more, served stale while
      a refresh runs.
    - When a call fails or the deadline passes, served if younger than
      ``ttl_s + stale_if_error_s`` (``stale-if-error``); when it fails because
      the day's quota budget is spent, served however old (``quota-exhausted``).
    """

    policy: CachePolicy
    stretch: Callable[[], float]

    def fresh_s(self) -> float:
        """How long an entry is fresh now."""
        return self.policy.ttl_s * self.stretch()

    def windows(self) -> tuple[float, float]:
        """Up to which age an entry is fresh now, and up to which it is served while revalidating."""
        fresh_s = self.policy.ttl_s * self.stretch()
        return fresh_s, fresh_s + self.policy.stale_while_revalidate_s

    def served_instead(
        self,
        lacking: Sequence[VideoId],
        held: Mapping[VideoId, VideoEntry],
        now: float,
        *,
        exhausted: bool,
    ) -> list[CacheInfo] | None:
        """How each of ``lacking`` is served from its entry in place of a failed call: within
        stale-if-error, or however old once the day's quota budget is spent (``exhausted``);
        ``None`` when one of them cannot be."""
        policy = self.policy
        infos = []
        for video_id in lacking:
            entry = held.get(video_id)
            if entry is None:
                return None
            if exhausted:
                age = max(0.0, now - entry.stored_at)
                info: CacheInfo | None = CacheInfo(True, age, policy.ttl_s - age, "quota-exhausted")
            else:
                info = policy.serve_if_error(entry.stored_at, now)
            if info is None:
                return None
            infos.append(info)
        return infos
