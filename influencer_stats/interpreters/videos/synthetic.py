"""Deterministic synthetic statistics, shared by the fake source and the YouTube double.

The numbers are derived from a BLAKE2b digest of the id, so the same id gives
the same numbers in every run and every process (unlike ``hash()``). Ids that
start with ``X`` stand for unknown, deleted or private videos.

``synthetic_stats`` are a video's counters when the synthetic world starts; ``stats_at`` are
those a time after, grown a minute at a time (the fake source's, so the demo moves; the
YouTube double keeps the starting ones).
"""

from __future__ import annotations

from functools import lru_cache
from hashlib import blake2b
from typing import Final

from influencer_stats.domain.models import VideoId, VideoStats


def is_unknown(video_id: str) -> bool:
    """Whether the synthetic world pretends this video does not exist."""
    return video_id.startswith("X")


@lru_cache(maxsize=65_536)
def synthetic_stats(video_id: str) -> VideoStats:
    """The synthetic counters of one video (dislikes present for about half)."""
    d = blake2b(video_id.encode(), digest_size=16).digest()
    views = 1_000 + int.from_bytes(d[0:4], "big") % 10_000_000
    likes = int.from_bytes(d[4:8], "big") % (views // 10 + 1)
    comments = int.from_bytes(d[8:12], "big") % (likes // 5 + 1)
    dislikes = int.from_bytes(d[12:14], "big") % (likes // 20 + 1) if d[15] & 1 else 0
    return VideoStats(views=views, likes=likes, comments=comments, dislikes=dislikes)


#: The synthetic world's counters move once a minute of its time ...
GROWTH_STEP_S: Final = 60
_STEPS_A_DAY: Final = 86_400 // GROWTH_STEP_S
#: ... each video gaining 0.5 % to 5 % of its starting views a day (its own pace, from its id),
#: and at least this many views a day (10 an hour), so a small video moves too.
LEAST_VIEWS_A_DAY: Final = 240


@lru_cache(maxsize=65_536)
def views_a_day(video_id: str) -> int:
    """How many views a day this video gains in the synthetic world."""
    pace = blake2b(video_id.encode(), digest_size=2, person=b"growth").digest()
    basis_points = 50 + int.from_bytes(pace, "big") % 451  # 0.50 % to 5.00 % a day
    return max(synthetic_stats(video_id).views * basis_points // 10_000, LEAST_VIEWS_A_DAY)


def stats_at(video_id: str, elapsed_s: float) -> VideoStats:
    """The counters of one video ``elapsed_s`` seconds of the synthetic world after it started.

    Deterministic per (id, elapsed time); each counter a whole number, never less than a moment
    before; they change once a ``GROWTH_STEP_S`` (the starting ones for the first step, and at
    or before 0). Views grow by ``views_a_day``; likes, comments and dislikes in the proportions
    of the starting counters (a video with no dislikes keeps none).
    """
    steps = int(elapsed_s // GROWTH_STEP_S) if elapsed_s > 0 else 0
    return _grown(video_id, steps) if steps else synthetic_stats(video_id)


@lru_cache(maxsize=65_536)
def _grown(video_id: str, steps: int) -> VideoStats:
    start = synthetic_stats(video_id)
    views = steps * views_a_day(video_id) // _STEPS_A_DAY
    likes = views * start.likes // start.views  # start.views >= 1,000
    comments = likes * start.comments // start.likes if start.likes else 0
    dislikes = likes * start.dislikes // start.likes if start.likes else 0
    return VideoStats(
        views=start.views + views,
        likes=start.likes + likes,
        comments=start.comments + comments,
        dislikes=start.dislikes + dislikes,
    )


def synthetic_video_id(n: int) -> VideoId:
    """The n-th of a stable sequence of valid 11-character video ids."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWabcdefghijklmnopqrstuvwxyz0123456789-_"
    chars = []
    for _ in range(11):
        n, r = divmod(n, len(alphabet))
        chars.append(alphabet[r])
    return VideoId("".join(reversed(chars)))
