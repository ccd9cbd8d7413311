"""compose.yaml describes a working distributed setup, and compose.host.yaml the same on host
networking (read statically; the containers run in tests/integration/test_deployment.py and,
brought up by compose itself, tests/integration/test_compose.py)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.config.resolve import ConfigError, offered, resolve
from influencer_stats.settings import declared
from tests.support import instead_of_slices

ROOT = Path(__file__).resolve().parents[2]
COMPOSE: dict[str, Any] = importlib.import_module("yaml").safe_load((ROOT / "compose.yaml").read_text())
SERVICES: dict[str, dict[str, Any]] = COMPOSE["services"]
HOST_TEXT = (ROOT / "compose.host.yaml").read_text()
HOST: dict[str, Any] = importlib.import_module("yaml").safe_load(HOST_TEXT)
TEMPLATE_MOUNT = "/etc/nginx/templates/default.conf.template"
SERVICE_PORT = 8080  # the image's EXPOSE and INFLUENCER_STATS_PORT's default
# The top-level keys docker-compose 1.29 (Debian's) accepts besides x-*: no `name:` (compose v2's).
COMPOSE_1_29_KEYS = {"version", "services", "networks", "volumes", "secrets", "configs"}
VARIABLE = re.compile(r"\$\{(\w+):-([^}]*)\}")
# The variables compose.host.yaml's addresses are made of, each given another value than its default.
HOST_PORTS = {"NGINX_PORT": "20001", "API_1_PORT": "20002", "API_2_PORT": "20003"}
HOST_PORTS |= {"YOUTUBE_DOUBLE_PORT": "20004", "REDIS_PORT": "20005"}


def environment(name: str) -> dict[str, str]:
    """A service's environment, from either of compose's forms (mapping or KEY=VALUE list)."""
    env = SERVICES[name].get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {key: str(value) for key, value in env.items()}


def replicas() -> list[str]:
    return [name for name in SERVICES if environment(name).get("INFLUENCER_STATS_PROFILE") == "distributed"]


def image_variable(svc: dict[str, Any]) -> tuple[str, str] | None:
    """(variable, default) of an image given as ``${VARIABLE:-default}``."""
    match = VARIABLE.fullmatch(str(svc.get("image", "")))
    return None if match is None else (match.group(1), match.group(2))


def default_image(svc: dict[str, Any]) -> str:
    variable = image_variable(svc)
    return str(svc.get("image", "")) if variable is None else variable[1]


def nginx() -> str:
    (name,) = [name for name, svc in SERVICES.items() if default_image(svc).startswith("nginx:")]
    return name


def template() -> str:
    mounts = [str(v).split(":") for v in SERVICES[nginx()].get("volumes", [])]
    (source,) = [source for source, target, *_ in mounts if target == TEMPLATE_MOUNT]
    return (ROOT / source).read_text()


def test_at_least_two_replicas_of_the_distributed_profile_built_from_the_dockerfile() -> None:
    names = replicas()

    assert len(names) >= 2
    for name in names:
        build = SERVICES[name]["build"]
        assert (build if isinstance(build, str) else build["context"]) == "."
    assert (ROOT / "Dockerfile").is_file()
    assert len({SERVICES[name]["image"] for name in names}) == 1


@pytest.mark.parametrize("name", replicas())
def test_each_replica_environment_resolves_to_valid_settings(name: str) -> None:
    # The image sets the bind address; compose adds the rest.
    environ = {"INFLUENCER_STATS_HOST": "0.0.0.0", **environment(name)}
    if environ["INFLUENCER_STATS_PROFILE"] not in offered():  # a slice it needs removed
        # Refused: the profile's choice is not installed, or the one compose states (its video
        # client, the batching slice's) is unknown here.
        with pytest.raises(ConfigError, match=r"not installed|unknown video client"):
            resolve(environ)
        return
    settings = resolve(environ)

    assert settings.profile == "distributed"
    assert settings.choices.one("store") == "redis"
    redis_host = urlsplit(settings.redis_url.value).hostname
    assert redis_host in SERVICES and "--appendonly" in SERVICES[redis_host]["command"]
    # Offline: YouTube is the double, a service of this file, which has no quota.
    youtube_host = urlsplit(settings.youtube_api_url).hostname
    assert youtube_host in SERVICES
    assert "youtube_double" in SERVICES[youtube_host]["command"]
    assert settings.quota_per_day == 0
    assert {redis_host, youtube_host} <= set(SERVICES[name]["depends_on"])


def test_every_influencer_stats_variable_it_sets_is_declared() -> None:
    known = {spec.env for spec in declared().values()} | {slot.env for slot in SLOTS.values()}
    used = {key for name in SERVICES for key in environment(name) if key.startswith("INFLUENCER_STATS_")}

    assert used, "no INFLUENCER_STATS_* variable found"
    assert used <= known, f"not settings: {sorted(used - known)}"


def test_redis_keeps_an_append_only_file_on_a_volume() -> None:
    redis = [name for name, svc in SERVICES.items() if default_image(svc).startswith("redis:")]
    (name,) = redis
    command = SERVICES[name]["command"]

    assert command[command.index("--appendonly") + 1] == "yes"
    volume, target = str(SERVICES[name]["volumes"][0]).split(":")[:2]
    assert target == "/data" and volume in COMPOSE["volumes"]


def test_nginx_in_front_lists_every_replica_once() -> None:
    name = nginx()
    env = environment(name)
    # One `server ${VAR}` line per replica, each VAR set to that replica's address.
    upstream = re.search(r"^upstream \w+ \{$(.*?)^\}$", template(), re.DOTALL | re.MULTILINE)
    assert upstream is not None
    servers = re.findall(r"^\s*server \$\{(\w+)\}", upstream.group(1), re.MULTILINE)

    assert sorted(env[var] for var in servers) == sorted(f"{r}:{SERVICE_PORT}" for r in replicas())
    assert "${NGINX_LISTEN}" in template() and env["NGINX_LISTEN"] == "80"
    assert SERVICES[name]["ports"], "the balancer publishes a port"


def test_nginx_fails_over_a_bounded_number_of_times_and_keeps_connections_alive() -> None:
    text = template()
    next_upstream = re.search(r"proxy_next_upstream ([^;]+);", text)
    tries = re.search(r"proxy_next_upstream_tries (\d+);", text)

    assert next_upstream is not None
    assert {"error", "timeout", "http_502", "http_503"} <= set(next_upstream.group(1).split())
    assert tries is not None and 1 < int(tries.group(1)) <= len(replicas())
    assert re.search(r"^\s*keepalive \d+;", text, re.MULTILINE)
    assert "proxy_http_version 1.1;" in text and 'proxy_set_header Connection "";' in text


def test_every_service_has_a_healthcheck_and_waits_for_healthy_dependencies() -> None:
    for name, svc in SERVICES.items():
        assert svc.get("healthcheck", {}).get("test"), f"{name} has no healthcheck"
        for dependency, condition in (svc.get("depends_on") or {}).items():
            assert condition == {"condition": "service_healthy"}, (name, dependency)
    nginx_depends = set(SERVICES[nginx()]["depends_on"])
    assert set(replicas()) <= nginx_depends


# ---- what lets it come up without Docker Hub: variables, and docker-compose 1.29 -----------------


@pytest.mark.parametrize("document", [COMPOSE, HOST], ids=["compose.yaml", "compose.host.yaml"])
def test_only_top_level_keys_docker_compose_1_29_accepts(document: dict[str, Any]) -> None:
    keys = {key for key in document if not key.startswith("x-")}

    assert keys <= COMPOSE_1_29_KEYS, f"docker-compose 1.29 refuses {sorted(keys - COMPOSE_1_29_KEYS)}"


def test_the_service_image_is_built_from_the_base_variable_with_the_dockerfiles_default() -> None:
    dockerfile_base = re.search(r"^ARG BASE=(\S+)$", (ROOT / "Dockerfile").read_text(), re.MULTILINE)
    assert dockerfile_base is not None
    built = {name: svc for name, svc in SERVICES.items() if "build" in svc}

    assert set(replicas()) < set(built)  # the replicas and the YouTube double
    for name, svc in built.items():
        assert svc["build"]["context"] == ".", name
        assert svc["build"]["args"] == {"BASE": f"${{BASE:-{dockerfile_base.group(1)}}}"}, name
        assert image_variable(svc) == ("SERVICE_IMAGE", "influencer-stats:latest"), name


def test_redis_and_nginx_images_are_variables_defaulting_to_the_official_images() -> None:
    images = {image_variable(svc) for svc in SERVICES.values() if "build" not in svc}

    assert images == {("REDIS_IMAGE", "redis:7-alpine"), ("NGINX_IMAGE", "nginx:1.27-alpine")}


def test_the_offline_command_names_the_images_docker_up_builds() -> None:
    # compose.host.yaml's header: BASE=local/python:3.11 REDIS_IMAGE=local/redis:7 NGINX_IMAGE=...
    command = re.search(r"^#\s+(BASE=\S+ REDIS_IMAGE=\S+ NGINX_IMAGE=\S+) \\$", HOST_TEXT, re.MULTILINE)
    assert command is not None
    named = dict(item.split("=", 1) for item in command.group(1).split())
    built = re.search(r"^IMAGES=\(([^)]*)\)$", (ROOT / "scripts" / "docker-up.sh").read_text(), re.MULTILINE)
    assert built is not None

    assert set(named.values()) <= set(built.group(1).split())
    assert "-f compose.yaml -f compose.host.yaml up" in HOST_TEXT


# ---- compose.host.yaml: every service on the host's network, on loopback ---------------------------


def render(value: Any, env: dict[str, str]) -> Any:
    """`value` with each ``${VAR:-default}`` interpolated as compose does (from `env`, else the default)."""
    if isinstance(value, dict):
        return {key: render(item, env) for key, item in value.items()}
    if isinstance(value, list):
        return [render(item, env) for item in value]
    if isinstance(value, str):
        return VARIABLE.sub(lambda m: env.get(m.group(1), m.group(2)), value)
    return value


def merged(env: dict[str, str]) -> dict[str, dict[str, Any]]:
    """compose.yaml with compose.host.yaml over it, as compose merges the two (the mappings used
    here — environment, build, healthcheck — key by key, the rest replaced), interpolated."""
    services: dict[str, dict[str, Any]] = {}
    for name in {*SERVICES, *HOST["services"]}:
        service = dict(SERVICES.get(name, {}))
        for key, value in HOST["services"].get(name, {}).items():
            if key in ("environment", "build", "healthcheck"):
                service[key] = {**service.get(key, {}), **value}
            else:
                service[key] = value
        services[name] = render(service, env)
    return services


def running(services: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The services `up` starts: those in no profile."""
    return {name: svc for name, svc in services.items() if not svc.get("profiles")}


def option(command: list[str], flag: str) -> str:
    return command[command.index(flag) + 1]


ENVS = [pytest.param({}, id="defaults"), pytest.param(HOST_PORTS, id="ports-from-variables")]


@pytest.mark.parametrize("env", ENVS)
def test_host_every_service_on_the_host_network_nothing_published(env: dict[str, str]) -> None:
    services = merged(env)

    # Every one, also one left out: a service without network_mode makes compose create a network.
    assert {name: svc.get("network_mode") for name, svc in services.items()} == dict.fromkeys(
        services, "host"
    )
    assert [name for name, svc in running(services).items() if svc.get("ports")] == []
    for name, svc in services.items():
        if "build" in svc:
            assert svc["build"]["network"] == "host", name  # `RUN pip install` has no bridge either


@pytest.mark.parametrize("env", ENVS)
def test_host_each_service_listens_on_loopback_on_its_own_port_and_is_found_there(
    env: dict[str, str],
) -> None:
    services = running(merged(env))
    redis, double = services["redis"]["command"], services["youtube-double"]["command"]
    (balancer,) = [name for name, svc in services.items() if default_image(svc).startswith("nginx:")]
    nginx_env = services[balancer]["environment"]
    ports = {"redis": option(redis, "--port"), "youtube-double": option(double, "--port")}

    assert option(redis, "--bind") == option(double, "--host") == "127.0.0.1"
    for name in replicas():
        # Its addresses, on the core server: what it runs on is the test above's (a slice's, maybe removed).
        settings = resolve(
            services[name]["environment"], {"server": "starlette", **instead_of_slices("distributed")}
        )
        assert (settings.host, settings.profile) == ("127.0.0.1", "distributed"), name
        ports[name] = str(settings.port)
        redis_url = urlsplit(settings.redis_url.value)
        assert (redis_url.hostname, str(redis_url.port)) == ("127.0.0.1", ports["redis"]), name
        youtube = urlsplit(settings.youtube_api_url)
        assert (youtube.hostname, str(youtube.port)) == ("127.0.0.1", ports["youtube-double"]), name
    host, _, ports[balancer] = nginx_env["NGINX_LISTEN"].rpartition(":")
    assert host == "127.0.0.1"
    upstreams = sorted(value for key, value in nginx_env.items() if key.startswith("UPSTREAM_"))
    assert upstreams == sorted(f"127.0.0.1:{ports[name]}" for name in replicas())

    assert len(set(ports.values())) == len(ports), ports
    if env:  # each port is the variable's, none written in
        assert set(ports.values()) == set(env.values())
    # The healthchecks knock where the services listen.
    assert option(services["redis"]["healthcheck"]["test"], "-p") == ports["redis"]
    assert services["youtube-double"]["healthcheck"]["test"][-1].startswith(
        f"http://127.0.0.1:{ports['youtube-double']}/"
    )
    assert services[balancer]["healthcheck"]["test"][-1] == f"http://127.0.0.1:{ports[balancer]}/lb-healthz"


def test_host_keeps_what_compose_yaml_says_but_the_addresses() -> None:
    services = merged({})
    (balancer,) = [name for name in running(services) if name not in SERVICES]
    address_flags = {"--port", "--bind", "--host"}

    # Redis: compose.yaml's command (the append-only file), then the address.
    base_redis = SERVICES["redis"]["command"]
    assert services["redis"]["command"][: len(base_redis)] == base_redis
    assert set(services["redis"]["command"][len(base_redis) :: 2]) <= address_flags
    # The double: the same command but for its address.
    base_double, double = SERVICES["youtube-double"]["command"], services["youtube-double"]["command"]
    assert len(double) == len(base_double)
    assert [a for a, b in zip(base_double, double, strict=True) if a != b] == ["0.0.0.0", "8081"]
    # The balancer twin: compose.yaml's nginx but for the network, the addresses and the port.
    same = {
        key: value
        for key, value in SERVICES[nginx()].items()
        if key not in {"ports", "environment", "healthcheck"}
    }
    twin = {
        key: value
        for key, value in HOST["services"][balancer].items()
        if key not in {"network_mode", "environment", "healthcheck"}
    }
    assert render(twin, {}) == render(same, {})
    assert set(HOST["services"][balancer]["environment"]) == set(environment(nginx()))
    assert {k: v for k, v in SERVICES[nginx()]["healthcheck"].items() if k != "test"} == {
        k: v for k, v in HOST["services"][balancer]["healthcheck"].items() if k != "test"
    }
