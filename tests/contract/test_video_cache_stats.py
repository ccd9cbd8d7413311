"""The stats query over the per-video cache, wired by the composition root: answers say their age."""

from __future__ import annotations

from pathlib import Path

from influencer_stats.bootstrap.root import build_stats, build_store, build_video_stats
from tests.contract.test_stats_query import ONE, A, B
from tests.contract.wired import wired


async def test_an_answer_from_cached_videos_says_how_old_they_are(tmp_path: Path) -> None:
    async with wired(tmp_path, {"cache": "none", "video_cache": "memory", "store": "dict"}) as root:
        query, store = await build_stats(root, await build_store(root), await build_video_stats(root))
        await store.save(ONE, (A, B))

        fetched = (await query.stats(ONE)).unwrap()
        cached = (await query.stats(ONE)).unwrap()

    assert fetched.cache is None  # every video fetched now
    assert cached.cache is not None and cached.cache.hit and cached.cache.age_s >= 0
    assert cached.stats == fetched.stats
