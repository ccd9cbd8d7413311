"""A real Prometheus (Debian's) scraping the service (two workers with the ``workers`` slice), with deploy/prometheus/.

promtool accepts the shipped config and rules; Prometheus, given the same config with
its target and intervals pointed at this test's service, finds the target up, loads
every rule and evaluates each without error; the process series come once per worker;
the Redis alert goes pending when Redis stops (where the stack needs Redis); and every metric the rules and the
Grafana dashboard name is in the service's ``/metrics``: with a series, or only declared when a
cache the profile names is not installed (nothing records what only it records). Without
prometheus, promtool or redis-server (scripts/prometheus-up.sh and scripts/perf-up.sh install
them) the test fails under CI=true and is skipped elsewhere. Every wait is bounded.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from influencer_stats.config.resolve import resolve
from influencer_stats.interpreters.metrics.families import QUOTA_BUDGET, QUOTA_LEFT
from influencer_stats.version import version
from perf.procs import running, stop
from perf.profiles import budgeted
from perf.redis_server import answers
from tests.needs import needs
from tests.support import (
    ROOT,
    WORKER_COUNTS,
    children_of,
    free_port,
    instead_of_slices,
    profile_args,
    running_double_process,
    running_service,
)

PROMETHEUS_DIR = ROOT / "deploy" / "prometheus"
CONFIG = PROMETHEUS_DIR / "prometheus.yml"
RULE_FILES = (PROMETHEUS_DIR / "recording.rules.yml", PROMETHEUS_DIR / "alerts.rules.yml")
DASHBOARD = ROOT / "deploy" / "grafana" / "influencer-stats.json"
JOB = "influencer-stats"
WAIT_S = 30.0
#: Two workers while a supervisor is installed (the ``workers`` slice), else one.
WORKERS = WORKER_COUNTS[-1]
#: Series Prometheus makes itself, not the service.
PROMETHEUS_OWN = frozenset({"up"})

T = TypeVar("T")
yaml: Any = importlib.import_module("yaml")  # PyYAML, without stubs (as tests/unit/test_compose_file.py)


def _tool(name: str) -> str:
    """The binary; without it a loud failure under CI=true (a skipped test checks nothing), else a skip."""
    path = shutil.which(name)
    if path is not None:
        return path
    message = f"{name} is not on PATH: run scripts/prometheus-up.sh and scripts/perf-up.sh"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


# --- metric names in PromQL --------------------------------------------------------------

_LABEL_LISTS = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_IDENTIFIER = re.compile(r"(?<![\w:.$])([A-Za-z_:][\w:]*)(\s*\()?")
_KEYWORDS = frozenset({"by", "without", "on", "ignoring", "group_left", "group_right"})
_KEYWORDS |= {"and", "or", "unless", "bool", "offset", "inf", "nan"}


def metric_names(expression: str) -> set[str]:
    """The metric (and recorded series) names a PromQL expression selects."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expression)  # strings: label values, regexes
    text = re.sub(r"\{[^}]*\}", "", text)  # label matchers
    text = re.sub(r"\[[^\]]*\]", "", text)  # ranges and subqueries ($__rate_interval too)
    text = _LABEL_LISTS.sub("", text)  # by (route, le): label names, not metrics
    return {
        match.group(1)
        for match in _IDENTIFIER.finditer(text)
        if match.group(2) is None and match.group(1).lower() not in _KEYWORDS  # not a function call
    }


def test_metric_names_are_read_from_promql_as_prometheus_would() -> None:
    expression = (
        'histogram_quantile(0.99, sum by (job, le) (rate(a_seconds_bucket{route!~"/x|y", le=~"1e3"}[5m])))'
        " / on (job) group_left b:c:rate5m * 1e3 > bool 2 unless max without (pid) (process_open_fds)"
        ' or label_replace(up{job="$job"}, "x", "$1", "y", "(.*)")[1h:$__rate_interval] offset 5m'
    )
    assert metric_names(expression) == {"a_seconds_bucket", "b:c:rate5m", "process_open_fds", "up"}


def _rules() -> list[dict[str, Any]]:
    return [
        rule
        for path in RULE_FILES
        for group in yaml.safe_load(path.read_text())["groups"]
        for rule in group["rules"]
    ]


def _dashboard_expressions() -> list[str]:
    """Every panel target's expression, and the metric each templating query reads."""
    document = json.loads(DASHBOARD.read_text())
    panels = [*document["panels"], *(p for row in document["panels"] for p in row.get("panels", []))]
    expressions = [target["expr"] for panel in panels for target in panel.get("targets", [])]
    for variable in document["templating"]["list"]:
        query = variable.get("definition", "")
        if query.startswith("label_values("):
            expressions.append(query.removeprefix("label_values(").partition(",")[0])
    return expressions


def _declared(scrape: str) -> set[str]:
    """The sample names of every family ``scrape`` declares (its HELP and TYPE), with samples or not."""
    suffixes = {
        "counter": ("_total",),
        "histogram": ("_bucket", "_sum", "_count"),
        "summary": ("_sum", "_count"),
    }
    return {
        family.name + suffix
        for family in text_string_to_metric_families(scrape)
        for suffix in suffixes.get(family.type, ("",))
    }


# --- running it --------------------------------------------------------------------------


def _until(what: str, probe: Callable[[], T | None], timeout: float = WAIT_S) -> T:
    """``probe()`` once it is neither None nor empty, polled for at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(0.25)
    raise AssertionError(f"{what}: not within {timeout:g}s (last: {last!r})")


class Api:
    """Prometheus's HTTP API, v1."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client

    def get(self, path: str, **params: str) -> Any:
        answer = self.client.get(path, params=params).json()
        assert answer["status"] == "success", answer
        return answer["data"]

    def query(self, expression: str) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self.get("/query", query=expression)["result"]
        return result


@contextmanager
def running_redis(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    port = free_port()
    argv = [
        _tool("redis-server"),
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
    ]
    with running(argv, tmp_path / "redis.log", cwd=tmp_path) as process:
        _until("redis-server answers PING", lambda: answers(port), timeout=10)
        yield process, f"redis://127.0.0.1:{port}/0"


@contextmanager
def running_prometheus(tmp_path: Path, target: str) -> Iterator[Api]:
    """Prometheus with deploy/prometheus/prometheus.yml, scraping ``target`` every second."""
    config = yaml.safe_load(CONFIG.read_text())
    config["global"].update(scrape_interval="1s", evaluation_interval="1s")
    config["rule_files"] = [str(PROMETHEUS_DIR / name) for name in config["rule_files"]]
    [job] = config["scrape_configs"]
    assert job["job_name"] == JOB
    job["static_configs"] = [{"targets": [target]}]
    path = tmp_path / "prometheus.yml"
    path.write_text(yaml.safe_dump(config))
    check = subprocess.run([_tool("promtool"), "check", "config", str(path)], capture_output=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    port = free_port()
    argv = [
        _tool("prometheus"),
        f"--config.file={path}",
        f"--storage.tsdb.path={tmp_path / 'tsdb'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--log.level=warn",
    ]
    url = f"http://127.0.0.1:{port}"
    with running(argv, tmp_path / "prometheus.log", cwd=tmp_path) as process:

        def ready() -> bool:
            assert process.poll() is None, (tmp_path / "prometheus.log").read_text()
            try:
                return httpx.get(f"{url}/-/ready", timeout=1).status_code == 200
            except httpx.TransportError:
                return False

        _until("Prometheus is ready", ready)
        with httpx.Client(base_url=f"{url}/api/v1", timeout=5) as client:
            yield Api(client)


def test_promtool_accepts_the_shipped_config_and_rules() -> None:
    promtool = _tool("promtool")
    for argv in (["check", "config", str(CONFIG)], ["check", "rules", *map(str, RULE_FILES)]):
        check = subprocess.run([promtool, *argv], capture_output=True, text=True, timeout=60)
        assert check.returncode == 0, check.stdout + check.stderr
        assert "SUCCESS" in check.stdout + check.stderr


def test_prometheus_scrapes_two_workers_loads_and_evaluates_the_rules_and_every_name_exists(
    tmp_path: Path,
) -> None:
    _tool("prometheus")
    with (
        running_redis(tmp_path) as (redis, redis_url),
        running_double_process(tmp_path / "double.log") as youtube,
    ):
        env = {"REDIS_URL": redis_url, "YOUTUBE_API_URL": youtube, "YOUTUBE_API_KEY": "any"}
        stack = resolve(env, {"profile": "distributed", **instead_of_slices("distributed")})
        _scrape_and_check(tmp_path, env, redis if "redis" in needs(stack) else None)


def _scrape_and_check(tmp_path: Path, env: dict[str, str], redis: subprocess.Popen[bytes] | None) -> None:
    """The service on ``env``, scraped by Prometheus, checked; then, when its stack needs the
    Redis given, that Redis stopped: its alert goes pending."""
    with (
        running_service(
            [*profile_args("distributed"), "--workers", WORKERS], tmp_path / "service.log", env=env
        ) as service,
        running_prometheus(tmp_path, service.url.removeprefix("http://")) as prometheus,
    ):
        # Traffic that makes every labelled series appear: calls, caches, quota, savings.
        videos = ["-4lB5EKS5Uk", "dQw4w9WgXcQ"]
        for name in ("a", "b"):
            assert httpx.put(f"{service.url}/collections/{name}", json={"videos": videos}).status_code == 201
        for name in ("a", "a", "b"):  # a: a call, then the stats cache; b: the video cache saves a call
            assert httpx.get(f"{service.url}/collections/{name}/stats").status_code == 200

        targets = _until(
            "the target is up",
            lambda: [t for t in prometheus.get("/targets")["activeTargets"] if t["health"] == "up"],
        )
        assert [t["labels"]["job"] for t in targets] == [JOB]

        # Each worker's process series, labelled with its pid: with a supervisor, a child of the service.
        def every_worker() -> list[dict[str, Any]] | None:
            series = prometheus.query("process_resident_memory_bytes")
            return series if len(series) == int(WORKERS) else None

        workers = _until(f"process series of {WORKERS} worker(s)", every_worker)
        pids = {int(r["metric"]["pid"]) for r in workers}
        family = children_of(service.process.pid) if WORKERS != "1" else {service.process.pid}
        assert len(pids) == int(WORKERS) and pids <= family
        [build] = prometheus.query("influencer_stats_build_info")
        assert build["metric"]["version"] == version() and build["metric"]["python"]

        # Every rule loaded, and each evaluated without error (health ok, not err or unknown).
        wanted = {rule.get("record") or rule["alert"] for rule in _rules()}

        def evaluated() -> dict[str, str] | None:
            rules = {r["name"]: r["health"] for g in prometheus.get("/rules")["groups"] for r in g["rules"]}
            return rules if set(rules) == wanted and set(rules.values()) == {"ok"} else None

        _until("every rule loaded and evaluated", evaluated)
        _until(
            "a recording rule has a value",
            lambda: prometheus.query(f'job:influencer_stats_http_requests:rate5m{{job="{JOB}"}}'),
        )

        # Every name the rules and the dashboard select is scraped (recorded ones are recorded).
        scrape = httpx.get(f"{service.url}/metrics").text
        exported = {s.name for family in text_string_to_metric_families(scrape) for s in family.samples}
        recorded = {rule["record"] for rule in _rules() if "record" in rule}
        named = {name for rule in _rules() for name in metric_names(rule["expr"])}
        named |= {name for expression in _dashboard_expressions() for name in metric_names(expression)}
        assert {
            "process_cpu_seconds_total",
            "python_gc_collections_total",
            "influencer_stats_build_info",
        } <= named
        assert {n for n in named if ":" in n} <= recorded
        missing = {n for n in named if ":" not in n} - exported - PROMETHEUS_OWN
        if instead_of_slices("distributed"):  # a cache it names is not installed: what only it records
            missing -= _declared(scrape)  # has no series, yet /metrics must still declare the name
        if not budgeted("distributed"):  # no quota ledger installed: the budget's gauges, absent
            missing -= {QUOTA_LEFT, QUOTA_BUDGET}  # without a budget by design (their HELP says so)
        assert not missing, f"named by deploy/ but not in /metrics: {sorted(missing)}"

        if redis is None:  # no choice of the stack needs Redis (the redis slice removed)
            return
        # Redis stops: the alert for it goes pending (it fires after its `for`).
        assert prometheus.query('influencer_stats_dependency_up{dependency="redis"} == 1')
        stop(redis)

        def redis_alert() -> list[dict[str, Any]]:
            alerts = prometheus.get("/alerts")["alerts"]
            return [a for a in alerts if a["labels"]["alertname"] == "InfluencerStatsRedisDown"]

        [alert] = _until("InfluencerStatsRedisDown is pending", redis_alert)
        assert alert["state"] in ("pending", "firing")
