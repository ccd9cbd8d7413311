"""The operator's conventions read without a process: ``--env-file``'s format, the unknown-variable warning."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from influencer_stats.config.env_file import load_env_file, read_env_file
from influencer_stats.config.resolve import ConfigError
from influencer_stats.config.unknown import known_variables, unknown_variables, warn_unknown_variables


def test_an_env_file_s_lines_are_read_as_docker_run_env_file_reads_them(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_bytes(
        b"\xef\xbb\xbf# a comment after a byte-order mark\n"
        b"\n"
        b"   # an indented comment\n"
        b"INFLUENCER_STATS_PORT=9000\r\n"
        b"  INFLUENCER_STATS_HOST=0.0.0.0\n"
        b"YOUTUBE_API_KEY=a key with = and # inside\n"
        b'INFLUENCER_STATS_REDIS_PREFIX=it\'s "literal"\n'
        b"INFLUENCER_STATS_WRITE_TOKEN=\n"
        b"HOME\n"  # a name alone passes the environment's through: it is there already
    )

    assert read_env_file(str(path)) == {
        "INFLUENCER_STATS_PORT": "9000",
        "INFLUENCER_STATS_HOST": "0.0.0.0",
        "YOUTUBE_API_KEY": "a key with = and # inside",
        "INFLUENCER_STATS_REDIS_PREFIX": 'it\'s "literal"',
        "INFLUENCER_STATS_WRITE_TOKEN": "",
    }


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "export INFLUENCER_STATS_HOST=0.0.0.0",
            "no 'export' before the key (Docker's --env-file refuses it): write INFLUENCER_STATS_HOST=…",
        ),
        (
            'YOUTUBE_API_KEY="abc"',
            "YOUTUBE_API_KEY's value is in quotes, which Docker's --env-file keeps in the value: "
            "write it without them",
        ),
        (
            "INFLUENCER_STATS_REDIS_PREFIX='stats:'",
            "INFLUENCER_STATS_REDIS_PREFIX's value is in quotes, which Docker's --env-file keeps in the value: "
            "write it without them",
        ),
        (
            "INFLUENCER_STATS_LOG_LEVEL=info ",
            "INFLUENCER_STATS_LOG_LEVEL's value ends in whitespace, which Docker's --env-file keeps in the value",
        ),
        (
            "INFLUENCER_STATS_PORT = 9000",
            "no space before '=' (Docker's --env-file refuses it): write INFLUENCER_STATS_PORT=9000",
        ),
    ],
)
def test_a_line_docker_would_refuse_or_read_otherwise_is_refused_naming_the_line(
    tmp_path: Path, line: str, message: str
) -> None:
    path = tmp_path / ".env"
    path.write_text(f"INFLUENCER_STATS_CACHE_TTL=7\n{line}\n")

    with pytest.raises(ConfigError) as raised:
        read_env_file(str(path))

    assert str(raised.value) == f"--env-file {path}: line 2: {message}"


def test_the_environment_wins_over_the_env_file(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text("INFLUENCER_STATS_PORT=9000\nINFLUENCER_STATS_HOST=0.0.0.0\n")
    environ = {"INFLUENCER_STATS_PORT": "8081"}

    load_env_file(str(path), environ)

    assert environ == {"INFLUENCER_STATS_PORT": "8081", "INFLUENCER_STATS_HOST": "0.0.0.0"}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("A=1\nnot a setting\n", "line 2: expected KEY=VALUE"),
        ("=value\n", "line 1: expected KEY=VALUE"),
        ("9LIVES=1\n", "line 1: expected KEY=VALUE"),
        (b"A=\xff\n", "not UTF-8 text"),
    ],
)
def test_a_line_that_is_not_key_equals_value_is_a_config_error_naming_the_line(
    tmp_path: Path, content: str | bytes, message: str
) -> None:
    path = tmp_path / ".env"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)

    with pytest.raises(ConfigError) as raised:
        read_env_file(str(path))

    assert str(raised.value) == f"--env-file {path}: {message}"


def test_a_missing_env_file_is_a_config_error_saying_so(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"--env-file .*nowhere: no such file or directory$"):
        read_env_file(str(tmp_path / "nowhere"))


def test_a_misspelled_variable_gets_one_line_naming_the_closest_known_one() -> None:
    environ = {"INFLUENCER_STATS_CACHE_TLL": "5", "INFLUENCER_STATS_CACHE_TTL": "5", "HOME": "/root"}
    stream = io.StringIO()

    warn_unknown_variables(environ, stream)

    assert stream.getvalue() == (
        "influencer-stats: warning: INFLUENCER_STATS_CACHE_TLL is not a setting, ignored; "
        "did you mean INFLUENCER_STATS_CACHE_TTL?\n"
    )


def test_a_variable_without_the_prefix_is_found_by_its_whole_name() -> None:
    assert list(unknown_variables({"INFLUENCER_STATS_REDIS_URL": "redis://db"})) == [
        "influencer-stats: warning: INFLUENCER_STATS_REDIS_URL is not a setting, ignored; did you mean REDIS_URL?"
    ]


def test_a_variable_like_no_setting_is_named_without_a_guess() -> None:
    assert list(unknown_variables({"INFLUENCER_STATS_ZZZZZZZZZZZZZZZZZZZZ": "1"})) == [
        "influencer-stats: warning: INFLUENCER_STATS_ZZZZZZZZZZZZZZZZZZZZ is not a setting, ignored "
        "(influencer-stats --help lists them)"
    ]


def test_every_setting_and_slot_variable_is_known_so_none_is_warned_about() -> None:
    known = known_variables()

    assert {"INFLUENCER_STATS_LOG_LEVEL", "INFLUENCER_STATS_STORE", "YOUTUBE_API_KEY"} <= known
    assert list(unknown_variables(dict.fromkeys(known, "x"))) == []
