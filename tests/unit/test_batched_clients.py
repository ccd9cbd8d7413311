"""The batched clients (the ``batching`` slice): a twin beside each YouTube client of one id a call.

Whatever library a client calls through, the core's aiohttp or a slice's (httpx), and whichever
of the two slices was loaded first, its ``-batched`` twin calls through the same library, puts up
to 50 ids in a call, and tells the video cache so (``ids_per_call``).
"""

from __future__ import annotations

from influencer_stats.bootstrap.videos import HTTP_LIBRARIES, VIDEO_CLIENTS, batches, ids_per_call
from influencer_stats.config.resolve import resolve
from influencer_stats.interpreters.youtube.youtube_api import MAX_IDS_PER_CALL
from tests.support import YOUTUBE_CLIENTS

DOUBLE = {"YOUTUBE_API_URL": "http://127.0.0.1:9/youtube/v3/videos"}


def test_each_client_of_one_id_a_call_has_a_batched_twin_on_its_library() -> None:
    singles = [name for name in YOUTUBE_CLIENTS if not batches(name)]

    assert singles  # the core's aiohttp at least
    assert sorted(YOUTUBE_CLIENTS) == sorted([*singles, *(f"{name}-batched" for name in singles)])
    for name in singles:
        twin = VIDEO_CLIENTS[f"{name}-batched"]
        assert batches(twin.name) and HTTP_LIBRARIES[twin.name] is HTTP_LIBRARIES[name]
        assert (twin.wrappers, twin.check, twin.spends_quota) == (
            VIDEO_CLIENTS[name].wrappers,
            VIDEO_CLIENTS[name].check,
            True,
        )


def test_only_a_batched_client_fills_the_video_caches_calls_to_fifty() -> None:
    for name in YOUTUBE_CLIENTS:
        settings = resolve(DOUBLE, {"video_client": name})

        assert ids_per_call(settings) == (MAX_IDS_PER_CALL if batches(name) else 0)
    assert ids_per_call(resolve(DOUBLE, {"video_client": "fake"})) == 0
