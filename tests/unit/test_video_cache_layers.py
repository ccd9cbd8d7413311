"""The per-video cache sits over the YouTube base and the video wrappers: neither imports it.

Kept with the slice (a contract in pyproject.toml would name it after it is gone): the same
check import-linter made, directly or through any chain, on the import graph grimp builds.
"""

from __future__ import annotations

import grimp

CACHE = "influencer_stats.interpreters.video_cache"
UNDER = ("influencer_stats.interpreters.youtube", "influencer_stats.interpreters.videos")


def test_neither_the_youtube_base_nor_the_video_wrappers_import_the_video_cache() -> None:
    graph = grimp.build_graph("influencer_stats", cache_dir=None)

    chains = {under: graph.find_shortest_chains(importer=under, imported=CACHE) for under in UNDER}

    assert chains == {under: set() for under in UNDER}
