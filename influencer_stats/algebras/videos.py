"""Video statistics source."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from returns.result import Result

from influencer_stats.domain.models import UpstreamError, VideoBatch, VideoId


class VideoStatsSource(Protocol):
    """Statistics of many videos, fetched in one call.

    The caller says *what* it needs; the interpreter decides *how* (one
    request per video, batches of 50, a cache, a fake).

    Contract (checked by ``tests/contract/test_video_source.py``):

    - ``fetch`` takes distinct, valid ids. On ``Success`` every requested id is
      either in ``batch.stats`` or in ``batch.missing`` (unknown, deleted,
      private), never both, and nothing else is in either.
    - Expected upstream faults are ``Failure`` values of the closed
      ``UpstreamError`` union (quota, misconfigured, unavailable, timeout,
      invalid data); a partial failure fails the whole call.
    - An empty request succeeds with an empty batch without any I/O.
    - Safe to call from concurrent tasks.
    """

    async def fetch(self, ids: Sequence[VideoId]) -> Result[VideoBatch, UpstreamError]: ...
