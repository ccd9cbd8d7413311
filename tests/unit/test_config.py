"""Settings, profiles and slots resolved in-process: flags, environment, profile, defaults."""

from __future__ import annotations

import json

import pytest

from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.config import resolve as resolve_module
from influencer_stats.config.cli import describe_profiles, describe_settings, list_choices, parse_command_line
from influencer_stats.config.profiles import PROFILES, Profile
from influencer_stats.config.resolve import ConfigError, not_installed, offered, resolve, resolve_sources
from influencer_stats.settings import declared, default_of
from tests.support import A_YOUTUBE_CLIENT, SHARED_STORE, YOUTUBE_CLIENTS, instead_of_slices

DOUBLE = {"YOUTUBE_API_URL": "http://127.0.0.1:9/youtube/v3/videos"}
#: Tests of stores and wrappers run the core server, no stats cache and a YouTube client installed
#: (batched with the batching slice): the profile's own may be a removed slice's (the stats
#: caches' choices: test_stats_cache_config.py).
CORE = {"server": "starlette", "cache": "none", "video_client": A_YOUTUBE_CLIENT}


def test_the_default_profile_is_the_offline_demo_and_every_value_its_declared_default() -> None:
    resolved = resolve_sources({})
    settings = resolved.settings

    assert settings.profile == "demo"
    assert settings.choices.one("video_client") == "fake"
    assert settings.choices.one("store") == SLOTS["store"].default_choice()  # SQLite with its slice
    for name in declared():
        if name != "profile":
            assert getattr(settings, name) == default_of(name)
            assert resolved.sources[name] == "default"


@pytest.mark.parametrize("profile", list(offered()))
def test_every_profile_resolves_with_a_double_for_youtube(profile: str) -> None:
    settings = resolve(DOUBLE, {"profile": profile})

    assert settings.profile == profile
    assert set(settings.choices) == set(SLOTS)


def test_a_profile_naming_a_choice_not_installed_is_not_offered_and_runs_only_with_it_overridden(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As a profile naming a removed slice's server (``distributed`` without ``asgi_server``).
    choices = {**PROFILES["demo"].choices, "server": "no-such-server"}
    absent = Profile("absent", "demo on a server no slice registered", choices, {})
    monkeypatch.setattr(resolve_module, "PROFILES", {**PROFILES, "absent": absent})

    assert not_installed(absent) == ("server 'no-such-server'",) and not_installed(PROFILES["demo"]) == ()
    assert "absent" not in offered() and "absent" not in describe_profiles()
    with pytest.raises(ConfigError, match=r"needs server 'no-such-server', not installed.*with --server"):
        resolve(DOUBLE, {"profile": "absent"})
    assert resolve(DOUBLE, {"profile": "absent", "server": "starlette"}).profile == "absent"


def test_a_flag_wins_over_the_environment_which_wins_over_the_profile() -> None:
    environ = {
        "INFLUENCER_STATS_STORE": "list",
        "INFLUENCER_STATS_LOGGER": "silent",
        "INFLUENCER_STATS_PORT": "9001",
    }

    resolved = resolve_sources(environ, {"store": "dict", "port": "9002"})

    assert resolved.settings.choices.one("store") == "dict" and resolved.sources["store"] == "flag"
    assert resolved.settings.choices.one("logger") == "silent" and resolved.sources["logger"] == "environment"
    assert resolved.settings.choices.one("server") == "starlette" and resolved.sources["server"] == "profile"
    assert resolved.settings.port == 9002 and resolved.sources["port"] == "flag"


def test_a_base_brings_its_usual_wrappers_unless_they_are_overridden() -> None:
    fast = resolve(DOUBLE, {"profile": "fast", **CORE})
    bare = resolve(DOUBLE, {"profile": "fast", **CORE, "video_wrappers": "none", "log_wrappers": "none"})

    assert fast.choices["video_wrappers"] == ("breaker",)
    assert fast.choices["log_wrappers"] == ("rate-limit",)  # "dropping" = the JSON logger under a rate limit
    assert bare.choices["video_wrappers"] == () and bare.choices["log_wrappers"] == ()
    assert resolve({}, {"video_client": "fake"}).choices["video_wrappers"] == ()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"profile": "v99"}, f"unknown profile 'v99'; valid: {', '.join(offered())}"),
        ({"store": "linkedlist"}, f"unknown store 'linkedlist'; valid: {', '.join(SLOTS['store'].names())}"),
        ({"logger": "loud"}, f"unknown logger 'loud'; valid: {', '.join(SLOTS['logger'].names())}"),
        ({"server": "tornado"}, "unknown server 'tornado'; valid:"),
        (
            {"video_wrappers": "breaker,retry"},
            f"unknown video wrappers 'retry'; valid: {', '.join(SLOTS['video_wrappers'].names())}",
        ),
        ({"video_wrappers": "breaker,breaker"}, "lists a wrapper twice"),
        ({"port": "99999"}, "--port must be at most 65,535, got '99999'"),
        ({"port": "http"}, "--port must be a whole number, got 'http'"),
    ],
)
def test_an_unknown_or_invalid_choice_is_a_config_error_listing_the_valid_names(
    flags: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        resolve({}, flags)

    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("INFLUENCER_STATS_STORE", "nosql", "unknown store 'nosql'"),
        ("INFLUENCER_STATS_MAX_VIDEOS", "0", "INFLUENCER_STATS_MAX_VIDEOS must be positive"),
        ("INFLUENCER_STATS_MAX_VIDEOS", "many", "INFLUENCER_STATS_MAX_VIDEOS must be a whole number"),
        ("INFLUENCER_STATS_MAX_VIDEOS", "50001", "at most 50,000"),
        ("INFLUENCER_STATS_GRANIAN_TASKS", "trio", "INFLUENCER_STATS_GRANIAN_TASKS must be rust or asyncio"),
        ("INFLUENCER_STATS_KEEPALIVE", "nan", "INFLUENCER_STATS_KEEPALIVE must be a finite number"),
        # A port out of range reached redis-py as a ValueError line from the server, not exit 2.
        (
            "REDIS_URL",
            "redis://127.0.0.1:99999/0",
            "REDIS_URL must be a redis/rediss/unix URL with a port from 0 to 65535",
        ),
        (
            "INFLUENCER_STATS_UPSTREAM_DEADLINE",
            "inf",
            "INFLUENCER_STATS_UPSTREAM_DEADLINE must be a finite number",
        ),
        ("INFLUENCER_STATS_CACHE_TTL", "-1", "INFLUENCER_STATS_CACHE_TTL must be positive"),
        ("INFLUENCER_STATS_UPSTREAM_RETRIES", "-1", "INFLUENCER_STATS_UPSTREAM_RETRIES must be at least 0"),
        # 1e308 s crashed Granian's shutdown (OverflowError); every duration is bounded, a day at most.
        (
            "INFLUENCER_STATS_GRACEFUL_SHUTDOWN",
            "1e308",
            "INFLUENCER_STATS_GRACEFUL_SHUTDOWN must be at most 86,400, got '1e308'",
        ),
        ("INFLUENCER_STATS_KEEPALIVE", "86401", "INFLUENCER_STATS_KEEPALIVE must be at most 86,400"),
        # Whole seconds for uvicorn and Granian: 0.5 became 0, Granian's "no kill timeout".
        (
            "INFLUENCER_STATS_GRACEFUL_SHUTDOWN",
            "0.5",
            "INFLUENCER_STATS_GRACEFUL_SHUTDOWN must be at least 1",
        ),
        # Integers reaching C or Rust (a listen backlog, aiohttp's parser) or a float (a rate).
        ("INFLUENCER_STATS_BACKLOG", "10000000000", "INFLUENCER_STATS_BACKLOG must be at most 65,535"),
        ("INFLUENCER_STATS_MAX_HEADER_BYTES", "2000000", "must be at most 1,048,576"),
        ("INFLUENCER_STATS_LOG_RATE_LIMIT", "1" + "0" * 400, "must be at most 1,000,000,000"),
        (
            "INFLUENCER_STATS_UPSTREAM_RETRIES",
            "1024",
            "INFLUENCER_STATS_UPSTREAM_RETRIES must be at most 100",
        ),
        ("YOUTUBE_API_URL", "ftp://x", "YOUTUBE_API_URL must be a http/https URL"),
        ("REDIS_URL", "http://x", "REDIS_URL must be a redis/rediss/unix URL"),
    ],
)
def test_a_bad_value_names_its_variable(variable: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        resolve({variable: value})

    assert message in str(raised.value)


def test_every_duration_and_integer_setting_has_an_upper_bound() -> None:
    huge = {"seconds": "1e308", "integer": "1" + "0" * 400}
    for spec in declared().values():
        kind = spec.kind.split()[0]
        if kind in huge:
            with pytest.raises(ValueError, match=f"^{spec.env} must be at most "):
                spec.parse(huge[kind])


def test_a_secret_is_never_echoed_in_an_error() -> None:
    with pytest.raises(ConfigError) as raised:
        resolve({"REDIS_URL": "http://user:hunter22@x"})

    assert "hunter22" not in str(raised.value)


def test_a_real_youtube_client_without_a_key_or_a_double_is_refused_saying_what_to_set() -> None:
    real = {"video_client": YOUTUBE_CLIENTS[0]}
    with pytest.raises(ConfigError) as raised:
        resolve({}, real)

    assert f"video client {YOUTUBE_CLIENTS[0]!r} calls the real YouTube API: set YOUTUBE_API_KEY" in str(
        raised.value
    )
    assert resolve({"YOUTUBE_API_KEY": "k"}, real).youtube_api_key is not None
    assert resolve(DOUBLE, real).youtube_api_key is None


def test_list_choices_is_json_of_every_slot_named_as_its_flag() -> None:
    listed = json.loads(list_choices())

    assert list(listed) == list(SLOTS)
    assert listed == {name: list(slot.names()) for name, slot in SLOTS.items()}  # the registries, in order
    assert listed["cache"][0] == "none"  # a wrapper slot may name none
    assert all(
        "--" + slot.replace("_", "-") in "".join(SLOTS[slot].flag for slot in listed) for slot in listed
    )


def test_print_settings_masks_secrets_and_says_where_each_value_came_from() -> None:
    environ = {
        "YOUTUBE_API_KEY": "key-1234",
        "INFLUENCER_STATS_WRITE_TOKEN": "token-5678",
        "REDIS_URL": "redis://:pass-9012@127.0.0.1:6379/0",
        "INFLUENCER_STATS_CACHE_TTL": "3",
    }

    text = describe_settings(resolve_sources(environ, {"port": "9000"}))

    assert "key-1234" not in text and "token-5678" not in text and "pass-9012" not in text
    rows = {line.split()[0]: line.split() for line in text.splitlines()[1:]}
    assert rows["youtube_api_key"][1:3] == ["***", "environment"]
    assert rows["cache_ttl_s"][1:4] == ["3.0", "environment", "INFLUENCER_STATS_CACHE_TTL"]
    assert rows["port"][1:3] == ["9000", "flag"]
    assert rows["host"][1:3] == ["127.0.0.1", "default"]
    assert rows["store"][1:3] == [SLOTS["store"].default_choice(), "default"]
    assert rows["redis_url"][1] == "***"


def test_the_command_line_takes_one_flag_per_slot_and_per_flagged_setting() -> None:
    command = parse_command_line(["--profile", "fast", "--video-wrappers", "none", "--port", "1"])

    assert command.action == "serve"
    assert command.flags["profile"] == "fast" and command.flags["video_wrappers"] == "none"
    assert command.flags["port"] == "1"
    assert parse_command_line(["--list-choices"]).action == "list_choices"
    assert parse_command_line(["--print-settings"]).action == "print_settings"


def _table(text: str) -> list[dict[str, str]]:
    """The rows of a table whose last column (only) may hold spaces, each by its header's names."""
    header, *lines = text.splitlines()
    names = header.split()
    return [dict(zip(names, line.split(maxsplit=len(names) - 1), strict=True)) for line in lines]


def test_the_profile_table_shows_every_profile_with_its_stacks() -> None:
    rows = {row["profile"]: row for row in _table(describe_profiles())}

    assert list(next(iter(rows.values()))) == [
        "profile",
        *(s.flag[2:] for s in SLOTS.values()),
        "description",
    ]
    assert list(rows) == list(offered())  # a profile naming a removed slice's choice: not shown
    for profile in offered().values():
        row = rows[profile.name]
        assert row["description"] == profile.description
        for slot in SLOTS.values():
            shown = row[slot.flag[2:]]
            slot.parse(shown)  # a name (or list of names) the slot accepts
            if slot.name in profile.choices:
                assert shown == profile.choices[slot.name], (profile.name, slot.name)
            elif slot.follows is not None:  # the wrappers the chosen base normally runs with
                base = SLOTS[slot.follows].registry[row[SLOTS[slot.follows].flag[2:]]]
                assert shown == (",".join(base.wrappers) or "none"), (profile.name, slot.name)


def test_every_declared_default_is_a_valid_value_of_its_own_setting() -> None:
    for name, spec in declared().items():
        default = default_of(name)
        if default is None:
            continue
        raw = getattr(default, "value", default)
        assert spec.parse(str(raw)) == default, name


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            {"profile": "fast", **CORE},
            "store 'dict' keeps collections in each process: with --workers 2 use",  # what: test_per_process_hint
        ),
        ({"store": "list"}, "store 'list' keeps collections in each process: with --workers 2 use"),
    ],
)
def test_several_workers_are_refused_where_state_is_kept_per_process(
    flags: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        resolve(DOUBLE, {**flags, "workers": "2"})

    assert message in str(raised.value)
    assert resolve(DOUBLE, flags).workers == 1  # one process: the same choices are fine


if SHARED_STORE is not None:  # several workers need a store they share (the sqlite or redis slice)

    @pytest.mark.parametrize(
        "flags",
        [
            {"profile": "demo", "store": SHARED_STORE},  # the demo's own store with the sqlite slice
            {"profile": "distributed", **CORE, **instead_of_slices("distributed"), "store": SHARED_STORE},
            {"store": SHARED_STORE, "cache": "none"},
        ],
    )
    def test_several_workers_are_allowed_where_every_worker_shares_the_state(flags: dict[str, str]) -> None:
        assert resolve({**DOUBLE, "INFLUENCER_STATS_WORKERS": "4"}, flags).workers == 4


def test_settings_exported_for_worker_processes_resolve_to_the_same_settings() -> None:
    from influencer_stats.serving.environment import export

    environ = {**DOUBLE, "INFLUENCER_STATS_CACHE_TTL": "3", "YOUTUBE_API_KEY": "k"}
    # Several workers on a store they share, when one is installed (the sqlite or redis slice).
    shared = {"store": SHARED_STORE, "workers": "3"} if SHARED_STORE is not None else {"workers": "1"}
    flags = {"profile": "distributed", **CORE, **instead_of_slices("distributed"), **shared}
    settings = resolve(environ, {**flags, "port": "9001", "logger": "all"})

    export(settings, environ)

    assert resolve(environ) == settings
    assert environ["INFLUENCER_STATS_WORKERS"] == shared["workers"]
    assert environ["INFLUENCER_STATS_LOGGER"] == "all"


@pytest.mark.parametrize(
    ("raw", "parsed"),
    [
        ("127.0.0.1:26379", (("127.0.0.1", 26379),)),
        ("a:1, b:2,[::1]:3", (("a", 1), ("b", 2), ("::1", 3))),
    ],
)
def test_redis_addresses_are_host_port_pairs_ipv6_in_brackets(raw: str, parsed: object) -> None:
    settings = resolve({"INFLUENCER_STATS_REDIS_SENTINELS": raw})

    assert settings.redis_sentinels == parsed
    assert resolve({"INFLUENCER_STATS_REDIS_CLUSTER": raw}).redis_cluster == parsed


@pytest.mark.parametrize(
    "raw", ["host", "host:", ":6379", "a b:1", "host:0", "host:65536", "a:1,,b:2", "a:1;b:2"]
)
def test_a_redis_address_without_a_host_and_a_port_is_refused_naming_the_variable(raw: str) -> None:
    with pytest.raises(ConfigError, match="INFLUENCER_STATS_REDIS_CLUSTER must be host:port pairs"):
        resolve({"INFLUENCER_STATS_REDIS_CLUSTER": raw})


def test_sentinels_and_a_cluster_at_once_are_refused() -> None:
    with pytest.raises(ConfigError, match="name two topologies: set one"):
        resolve({"INFLUENCER_STATS_REDIS_SENTINELS": "a:1", "INFLUENCER_STATS_REDIS_CLUSTER": "b:2"})


@pytest.mark.parametrize(("level", "tasks"), [("INFO", "RUST"), ("Info", "Rust"), ("info", "rust")])
def test_a_word_setting_is_read_in_any_case(level: str, tasks: str) -> None:
    settings = resolve({"INFLUENCER_STATS_LOG_LEVEL": level, "INFLUENCER_STATS_GRANIAN_TASKS": tasks})

    assert settings.log_level == "info"
    assert settings.granian_tasks == "rust"
