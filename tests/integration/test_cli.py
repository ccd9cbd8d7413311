"""``main.py`` and ``uvicorn main:app`` as a user runs them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import orjson
import pytest

from tests.support import ROOT, running_double_process, running_service


def run_main(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "main.py", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
        check=False,
    )


def test_list_profiles_prints_every_profile_with_its_choices() -> None:
    result = run_main("--list-profiles")

    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0].split()[:6] == ["profile", "server", "video-client", "store", "logger", "cache"]
    assert any(line.split()[:5] == ["demo", "starlette", "fake", "sqlite", "dropping"] for line in lines)
    assert any(line.split()[:5] == ["v1", "starlette", "httpx", "list", "all"] for line in lines)
    assert {line.split()[0] for line in lines[1:]} >= {
        "demo",
        "v1",
        "v2",
        "v3",
        "v4",
        "v5",
        "fast",
        "youtube",
    }


def test_an_unknown_profile_exits_2_listing_the_valid_names() -> None:
    result = run_main("--profile", "v99")

    assert result.returncode == 2
    assert "v99" in result.stderr and "demo" in result.stderr and "v1" in result.stderr


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--store", "linkedlist", "unknown store 'linkedlist'"),
        ("--logger", "loud", "unknown logger 'loud'"),
        ("--server", "tornado", "unknown server 'tornado'"),
    ],
)
def test_an_unknown_choice_exits_2_listing_the_valid_names(flag: str, value: str, message: str) -> None:
    result = run_main(flag, value)

    assert result.returncode == 2
    assert message in result.stderr and "valid:" in result.stderr


def test_an_unknown_choice_from_the_environment_exits_2_too() -> None:
    result = run_main(env={**os.environ, "INFLUENCER_STATS_STORE": "nosql"})

    assert result.returncode == 2
    assert "unknown store 'nosql'" in result.stderr


@pytest.mark.parametrize(
    ("value", "message"),
    [("0", "must be positive"), ("many", "must be a whole number"), ("50001", "at most 50,000")],
)
def test_a_bad_video_limit_exits_2_saying_why(value: str, message: str) -> None:
    result = run_main(env={**os.environ, "INFLUENCER_STATS_MAX_VIDEOS": value})

    assert result.returncode == 2
    assert "INFLUENCER_STATS_MAX_VIDEOS" in result.stderr and message in result.stderr


def test_an_unknown_granian_task_implementation_exits_2() -> None:
    result = run_main(env={**os.environ, "INFLUENCER_STATS_GRANIAN_TASKS": "trio"})

    assert result.returncode == 2
    assert "INFLUENCER_STATS_GRANIAN_TASKS must be rust or asyncio" in result.stderr


def test_a_bad_port_exits_2() -> None:
    assert run_main("--port", "99999").returncode == 2


def test_a_real_youtube_client_without_a_key_exits_2_saying_what_to_set() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("YOUTUBE_API_KEY", "YOUTUBE_API_URL")}

    result = run_main("--profile", "v1", env=env)

    assert result.returncode == 2
    assert "YOUTUBE_API_KEY" in result.stderr


def test_profile_v1_serves_and_logs_every_event_as_json(tmp_path: Path) -> None:
    with (
        running_double_process(tmp_path / "double.log") as double_url,
        running_service(
            ["--profile", "v1"], tmp_path / "v1.log", env={"YOUTUBE_API_URL": double_url}
        ) as service,
    ):
        for n in range(3):
            httpx.put(f"{service.url}/collections/c{n}", json={"videos": ["-4lB5EKS5Uk"]})
        stats = httpx.get(f"{service.url}/collections/c2/stats")

    assert stats.status_code == 200 and stats.json()["impressions"] > 0
    events = [orjson.loads(line) for line in service.output().splitlines() if line.startswith("{")]
    names = [e["event"] for e in events]
    assert names[0] == "service.started" and events[0]["store"] == "list" and events[0]["logger"] == "all"
    assert names.count("store.probe") >= 3 + 3  # the list store logs every entry it walks
    assert "stats.computed" in names


def test_environment_variables_pick_the_profile_and_override_choices(tmp_path: Path) -> None:
    env = {**os.environ, "INFLUENCER_STATS_STORE": "list", "INFLUENCER_STATS_LOGGER": "silent"}
    with running_service([], tmp_path / "env.log", env=env) as service:
        httpx.put(f"{service.url}/collections/c", json={"videos": []})

    assert service.output() == ""  # silent logger: not even the start event


def test_uvicorn_main_app_serves_with_settings_from_the_environment(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "uvicorn", "main:app", "--log-level", "warning"]
    with running_service([], tmp_path / "uvicorn.log", command=command) as service:
        put = httpx.put(f"{service.url}/collections/u", json={"videos": ["-4lB5EKS5Uk"]})
        stats = httpx.get(f"{service.url}/collections/u/stats")

    assert put.status_code == 201
    assert stats.json()["videos"] == 1


def test_sigterm_stops_the_service_cleanly_and_flushes_the_log(tmp_path: Path) -> None:
    with running_service([], tmp_path / "stop.log") as service:
        httpx.put(f"{service.url}/collections/last", json={"videos": []})

    # uvicorn re-raises SIGTERM after its graceful shutdown, as a process should.
    assert service.process.returncode in (0, -signal.SIGTERM)
    assert '"event":"service.stopping"' in service.output()
    assert "Traceback" not in service.output()
