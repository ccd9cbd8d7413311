"""Deterministic synthetic statistics, shared by the fake source and the YouTube double.

The numbers are derived from a BLAKE2b digest of the id, so the same id gives
the same numbers in every run and every process (unlike ``hash()``). Ids that
start with ``X`` stand for unknown, deleted or private videos.
"""

from __future__ import annotations

from functools import lru_cache
from hashlib import blake2b

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


def synthetic_video_id(n: int) -> VideoId:
    """The n-th of a stable sequence of valid 11-character video ids."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWabcdefghijklmnopqrstuvwxyz0123456789-_"
    chars = []
    for _ in range(11):
        n, r = divmod(n, len(alphabet))
        chars.append(alphabet[r])
    return VideoId("".join(reversed(chars)))
