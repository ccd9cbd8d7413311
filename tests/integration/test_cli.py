"""``main.py`` and ``uvicorn main:app`` as a user runs them."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import httpx
import orjson
import pytest

from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.config.resolve import offered, resolve
from influencer_stats.servers import server as server_named
from tests.support import (
    ROOT,
    SERVERS,
    SHARED_STORE,
    SHARED_STORE_ARGS,
    YOUTUBE_CLIENTS,
    free_port,
    profile_args,
    running_double_process,
    running_service,
    wait_for,
)


def run_main(
    *args: str, env: dict[str, str] | None = None, script: str = "main.py"
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, script, *args],
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
    header, *lines = result.stdout.splitlines()
    columns = ["profile", *(slot.flag.removeprefix("--") for slot in SLOTS.values()), "description"]
    assert header.split() == columns
    rows = {
        line.split()[0]: dict(zip(columns, line.split(maxsplit=len(columns) - 1), strict=True))
        for line in lines
    }
    assert list(rows) == list(offered())  # the registry, in order; a removed slice's: not shown
    for profile in offered().values():
        shown = {slot: rows[profile.name][SLOTS[slot].flag.removeprefix("--")] for slot in profile.choices}
        assert shown == dict(profile.choices)
        assert rows[profile.name]["description"] == profile.description


def test_a_profile_whose_server_is_not_installed_exits_2_unless_its_server_is_given(tmp_path: Path) -> None:
    # As the profiles of a removed server slice are (fast without granian_server): one here that is not.
    profile = tmp_path / "absent.py"
    profile.write_text(
        "import runpy, sys\n"
        "from influencer_stats.config import resolve\n"
        "from influencer_stats.config.profiles import PROFILES, Profile\n"
        "choices = {**PROFILES['demo'].choices, 'server': 'no-such-server'}\n"
        "resolve.PROFILES = {**PROFILES, 'absent': Profile('absent', 'x', choices, {})}\n"
        "sys.argv = ['main.py', *sys.argv[1:]]\n"
        "runpy.run_path('main.py', run_name='__main__')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    listed = run_main("--list-profiles", env=env, script=str(profile))
    refused = run_main("--profile", "absent", "--print-settings", env=env, script=str(profile))
    given = run_main(
        "--profile", "absent", "--server", "starlette", "--print-settings", env=env, script=str(profile)
    )

    assert listed.returncode == 0 and "absent" not in listed.stdout
    assert refused.returncode == 2
    assert "profile 'absent' needs server 'no-such-server', not installed" in refused.stderr
    assert "--server" in refused.stderr and "Traceback" not in refused.stderr
    assert given.returncode == 0, given.stderr


def test_list_choices_prints_json_of_every_slot() -> None:
    result = run_main("--list-choices")

    assert result.returncode == 0
    choices = orjson.loads(result.stdout)
    assert choices == {name: list(slot.names()) for name, slot in SLOTS.items()}  # the registries, in order


def test_print_settings_exits_0_without_serving_and_masks_the_key() -> None:
    env = {**os.environ, "YOUTUBE_API_KEY": "secret-key-4321", "INFLUENCER_STATS_CACHE_TTL": "7"}

    result = run_main("--profile", list(offered())[-1], "--print-settings", env=env)

    assert result.returncode == 0
    assert "secret-key-4321" not in result.stdout
    assert any(
        line.split()[:3] == ["cache_ttl_s", "7.0", "environment"] for line in result.stdout.splitlines()
    )


def test_help_lists_every_slot_s_choices_and_every_setting() -> None:
    result = run_main("--help")

    assert result.returncode == 0
    assert "--video-client" in result.stdout and all(client in result.stdout for client in YOUTUBE_CLIENTS)
    assert "INFLUENCER_STATS_UPSTREAM_DEADLINE" in result.stdout


def test_a_config_error_exits_2_with_one_line_and_no_traceback() -> None:
    result = run_main("--store", "linkedlist", env={**os.environ, "INFLUENCER_STATS_KEEPALIVE": "nan"})

    assert result.returncode == 2
    assert result.stderr.startswith("main.py: error: ") and result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("variable", "value", "bound"),
    [
        # Passed validation, then Granian's shutdown raised OverflowError (exit 1, a traceback).
        ("INFLUENCER_STATS_GRACEFUL_SHUTDOWN", "1e308", "86,400"),
        ("INFLUENCER_STATS_BACKLOG", "10000000000", "65,535"),  # listen(): OverflowError at start
        ("INFLUENCER_STATS_MAX_HEADER_BYTES", "1" + "0" * 20, "1,048,576"),  # aiohttp's parser, Granian
        ("INFLUENCER_STATS_LOG_RATE_LIMIT", "1" + "0" * 400, "1,000,000,000"),  # a float past 1e308
    ],
)
@pytest.mark.parametrize("server", SERVERS)
def test_a_setting_past_its_bound_exits_2_with_one_line_naming_it_on_every_server(
    server: str, variable: str, value: str, bound: str
) -> None:
    result = run_main("--server", server, env={**os.environ, variable: value})

    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.startswith(f"main.py: error: {variable} must be at most {bound}, got ")
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr


def test_profile_v1_serves_and_logs_every_event_as_json(tmp_path: Path) -> None:
    with (
        running_double_process(tmp_path / "double.log") as double_url,
        running_service(
            profile_args("v1"), tmp_path / "v1.log", env={"YOUTUBE_API_URL": double_url}
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

    # Silent logger: not even the start event; only the start-up line, which is not a log event.
    [line] = service.output().splitlines()
    assert line.startswith(f"influencer-stats: listening on {service.url} (profile demo: server starlette,")
    assert "store list" in line and "logger silent" in line


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

    # A stop asked for and done gracefully: 0 (test_conventions checks every server, with workers too).
    assert service.process.returncode == 0
    assert '"event":"service.stopping"' in service.output()
    assert "Traceback" not in service.output()


@pytest.mark.parametrize("server", SERVERS)
def test_uvicorn_main_app_serves_each_asgi_server_and_exits_2_saying_why_with_another(
    server: str, tmp_path: Path
) -> None:
    # Every registered server, as it declares itself (``Server.asgi``): the core's is ASGI.
    command = [sys.executable, "-m", "uvicorn", "main:app"]
    env = {**os.environ, "INFLUENCER_STATS_SERVER": server}
    if server_named(server).asgi:
        with running_service([], tmp_path / "uvicorn.log", command=command, env=env) as service:
            health = httpx.get(f"{service.url}/healthz").status_code
        assert health == 200
    else:
        result = subprocess.run(
            command, cwd=ROOT, capture_output=True, text=True, timeout=30, env=env, check=False
        )
        assert result.returncode == 2
        assert f"server {server!r} is not an ASGI application" in result.stderr
        assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "command",
    [[sys.executable, "-m", "influencer_stats"], [str(Path(sys.executable).parent / "influencer-stats")]],
    ids=["python -m influencer_stats", "influencer-stats"],
)
def test_the_package_runs_as_a_command_with_main_py_s_arguments(command: list[str]) -> None:
    version = subprocess.run([*command, "--version"], capture_output=True, text=True, timeout=30, check=False)
    refused = subprocess.run(
        [*command, "--store", "nosql"], capture_output=True, text=True, timeout=30, check=False
    )

    released = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert version.returncode == 0 and version.stdout.split()[-1] == released
    assert refused.returncode == 2 and "unknown store 'nosql'" in refused.stderr


@pytest.mark.parametrize("server", SERVERS)
def test_every_server_says_where_it_listens_once_the_port_is_bound(server: str, tmp_path: Path) -> None:
    with running_service(["--server", server, "--store", "dict"], tmp_path / "start.log") as service:
        answered = httpx.get(f"{service.url}/healthz").status_code
        # Granian's line comes from a thread that looks at the port every 50 ms: a first answer may beat it.
        wait_for(lambda: "influencer-stats: listening on" in service.output(), 5)

    said = [
        line for line in service.output().splitlines() if line.startswith("influencer-stats: listening on")
    ]
    # Every slot in order, as its flag names it, with what the demo profile resolves it to.
    choices = resolve({}, {"server": server, "store": "dict"}).choices
    every_slot = ", ".join(f"{slot.replace('_', ' ')} {choices.text(slot)}" for slot in SLOTS)
    assert answered == 200
    assert said == [f"influencer-stats: listening on {service.url} (profile demo: {every_slot})"]


def test_uvicorn_main_app_without_log_options_logs_only_json_and_no_access_log(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "uvicorn", "main:app", "--no-server-header"]
    with running_service([], tmp_path / "uvicorn.log", command=command) as service:
        put = httpx.put(f"{service.url}/collections/q", json={"videos": ["-4lB5EKS5Uk"]})
        health = httpx.get(f"{service.url}/healthz")

    assert put.status_code == 201 and health.status_code == 200
    assert "server" not in health.headers  # uvicorn adds it before it loads the app: the flag is needed
    # stderr's line and stdout's JSON share the log file: their order there is the scheduler's
    said: list[str] = []
    lines: list[str] = []
    for line in filter(None, service.output().splitlines()):
        (lines if line.startswith("{") else said).append(line)
    [listening] = said  # no "INFO: ..." line, no access log: everything else is JSON
    assert listening.startswith(
        f"influencer-stats: listening on {service.url} (profile demo: "
    )  # not uvicorn's
    assert lines
    assert '"event":"service.stopping"' in service.output()


def test_uvicorn_main_app_applies_the_header_limits_with_the_protocol_named_by_import_path(
    tmp_path: Path,
) -> None:
    protocol = "influencer_stats.serving.uvicorn:EnvironmentProtocol"
    command = [sys.executable, "-m", "uvicorn", "main:app", "--http", protocol, "--no-server-header"]
    env = {**os.environ, "INFLUENCER_STATS_MAX_HEADERS": "8"}
    with running_service([], tmp_path / "uvicorn.log", command=command, env=env) as service:
        within = httpx.get(f"{service.url}/healthz", headers={f"x-{n}": "1" for n in range(2)})
        beyond = httpx.get(f"{service.url}/healthz", headers={f"x-{n}": "1" for n in range(8)})

    assert within.status_code == 200
    assert beyond.status_code == 431
    assert beyond.json()["type"] == "urn:influencer-stats:problem:headers-too-large"


def test_several_workers_without_a_supervisor_are_one_line_and_exit_2_naming_what_is_missing() -> None:
    # The core serves one process: with no supervisor installed (``bootstrap.supervision``, the
    # workers slice's; emptied here, so this holds with or without it), --workers 2 is refused at
    # start-up before anything is built.
    code = (
        "import sys; import influencer_stats.bootstrap.slots; "
        "from influencer_stats.bootstrap.supervision import SUPERVISION; SUPERVISION.supervisor = None; "
        "from influencer_stats.__main__ import run; sys.exit(run(sys.argv[1:]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, *SHARED_STORE_ARGS, "--workers", "2", "--port", str(free_port())],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    if SHARED_STORE is None:  # no store workers share: the store is refused first, naming the way left
        assert result.stderr.endswith("use --workers 1 (no store installed is shared between processes)\n")
        return
    assert result.stderr.startswith("influencer-stats: error: --workers 2: this build serves one process; ")
    assert "the workers slice, which is not installed" in result.stderr
