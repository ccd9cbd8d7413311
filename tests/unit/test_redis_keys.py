"""The Redis key layout: deployed data is read through these exact strings."""

from __future__ import annotations

from redis.crc import key_slot

from influencer_stats.interpreters.redis_keys import RedisKeys


def test_the_key_layout_is_the_deployed_one() -> None:
    keys = RedisKeys("is")

    assert keys.collection("one") == "is:col:{one}"
    assert keys.version("one") == "is:ver:{one}"
    assert keys.stats("one") == "is:stats:{one}"
    assert keys.index == "is:ids"


def test_every_key_of_one_collection_shares_its_hash_tag_under_any_prefix() -> None:
    keys = RedisKeys("t1")

    assert {k.split(":", 2)[2] for k in (keys.collection("x"), keys.version("x"), keys.stats("x"))} == {"{x}"}
    assert keys.collection("x").startswith("t1:")
    assert keys.index == "t1:ids"


def test_the_sorted_index_shares_the_slot_of_the_deployed_set_index_under_any_prefix() -> None:
    """One ``MULTI`` updates both indexes, and one script reads both, on Cluster too."""
    for prefix in ("is", "t1", "a-b.c"):
        keys = RedisKeys(prefix)

        assert keys.sorted_index == f"{prefix}:sorted-ids:{{{prefix}:ids}}"
        assert key_slot(keys.sorted_index.encode()) == key_slot(keys.index.encode())
