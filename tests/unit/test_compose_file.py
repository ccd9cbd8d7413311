"""compose.yaml describes a working distributed setup (read statically; the containers run in
tests/integration/test_deployment.py)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.config.resolve import resolve
from influencer_stats.settings import declared

ROOT = Path(__file__).resolve().parents[2]
COMPOSE: dict[str, Any] = importlib.import_module("yaml").safe_load((ROOT / "compose.yaml").read_text())
SERVICES: dict[str, dict[str, Any]] = COMPOSE["services"]
TEMPLATE_MOUNT = "/etc/nginx/templates/default.conf.template"
SERVICE_PORT = 8080  # the image's EXPOSE and INFLUENCER_STATS_PORT's default


def environment(name: str) -> dict[str, str]:
    """A service's environment, from either of compose's forms (mapping or KEY=VALUE list)."""
    env = SERVICES[name].get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {key: str(value) for key, value in env.items()}


def replicas() -> list[str]:
    return [name for name in SERVICES if environment(name).get("INFLUENCER_STATS_PROFILE") == "distributed"]


def nginx() -> str:
    (name,) = [name for name, svc in SERVICES.items() if str(svc.get("image", "")).startswith("nginx:")]
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
    settings = resolve({"INFLUENCER_STATS_HOST": "0.0.0.0", **environment(name)})

    assert settings.profile == "distributed"
    assert settings.choices.one("store") == "redis"
    redis_host = urlsplit(settings.redis_url.value).hostname
    assert redis_host in SERVICES and "--appendonly" in SERVICES[redis_host]["command"]
    # Offline: YouTube is the double, a service of this file, which has no quota.
    youtube_host = urlsplit(settings.youtube_api_url).hostname
    assert youtube_host in SERVICES
    assert "influencer_stats.testing.youtube_double" in SERVICES[youtube_host]["command"]
    assert settings.quota_per_day == 0
    assert {redis_host, youtube_host} <= set(SERVICES[name]["depends_on"])


def test_every_influencer_stats_variable_it_sets_is_declared() -> None:
    known = {spec.env for spec in declared().values()} | {slot.env for slot in SLOTS.values()}
    used = {key for name in SERVICES for key in environment(name) if key.startswith("INFLUENCER_STATS_")}

    assert used, "no INFLUENCER_STATS_* variable found"
    assert used <= known, f"not settings: {sorted(used - known)}"


def test_redis_keeps_an_append_only_file_on_a_volume() -> None:
    redis = [name for name, svc in SERVICES.items() if str(svc.get("image", "")).startswith("redis:")]
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
