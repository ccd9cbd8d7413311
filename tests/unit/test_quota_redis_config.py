"""The day's quota counted in Redis, as config resolves it (the joint ``quota__redis``'s part of
test_quota_config.py): one count for every worker, so several workers may spend the budget."""

from __future__ import annotations

from influencer_stats.config.resolve import resolve
from tests.support import YOUTUBE_CLIENTS

DOUBLE = {"YOUTUBE_API_URL": "http://127.0.0.1:9/youtube/v3/videos"}


def test_several_workers_spending_the_budget_count_it_once_in_redis() -> None:
    flags = {"video_client": YOUTUBE_CLIENTS[0], "store": "redis", "cache": "none", "workers": "2"}

    settings = resolve(DOUBLE, {**flags, "quota": "redis"})

    assert settings.workers == 2 and settings.choices.one("quota") == "redis"
