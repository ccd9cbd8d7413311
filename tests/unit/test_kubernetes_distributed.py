"""deploy/kubernetes/distributed/: the distributed profile on Kubernetes, pods on Redis behind a Service,
scaled by a HorizontalPodAutoscaler (read statically, as test_kubernetes_demo.py reads the demo's).
The redis slice's: every pod answers any request only from the store they share."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from influencer_stats.config.resolve import ConfigError, resolve
from influencer_stats.http.routes import HEALTHZ, READYZ
from influencer_stats.settings import Settings
from tests import manifests
from tests.support import installed_env
from tests.unit.http_api_support import service

FOLDER = manifests.KUBERNETES / "distributed"
DOCS = manifests.documents(FOLDER)
((DEPLOYMENT, TEMPLATE, CONTAINER),) = manifests.api_containers(FOLDER)


def settings_of(secret: dict[str, object] | None) -> Settings:
    """The settings of the pods' environment; a choice not installed (a removed slice's) the slot's
    first instead, as every deployment test runs it."""
    env = manifests.environment(DOCS, CONTAINER, secret)
    return resolve({**env, **installed_env(env)})


def test_every_document_is_valid_against_every_supported_kubernetes_schema() -> None:
    manifests.assert_valid_against_every_schema(FOLDER)


def test_kubectl_applies_the_folder_as_it_is() -> None:
    manifests.assert_applies_as_it_is(FOLDER)


def test_every_variable_it_sets_is_a_setting() -> None:
    manifests.assert_every_variable_is_known(FOLDER)


def test_the_key_the_token_and_a_redis_password_come_from_the_example_s_secret_optionally() -> None:
    manifests.assert_secret_references_name_the_example(FOLDER)
    names = {v["name"] for v in CONTAINER["env"]}

    assert {"YOUTUBE_API_KEY", "INFLUENCER_STATS_WRITE_TOKEN", "REDIS_URL"} <= names


def test_nothing_runs_privileged_and_every_root_filesystem_is_read_only() -> None:
    manifests.assert_hardened(FOLDER)


def test_the_image_its_user_and_its_port_are_the_dockerfile_s() -> None:
    manifests.assert_the_image_as_the_dockerfile_builds_it(FOLDER)


def test_each_service_reaches_its_pods_on_a_named_port() -> None:
    manifests.assert_services_reach_their_pods(FOLDER)


def test_its_environment_resolves_to_the_distributed_profile_on_the_redis_of_the_folder() -> None:
    settings = settings_of(manifests.secret_example())

    assert settings.profile == "distributed"
    assert settings.choices.one("store") == "redis"
    assert (settings.host, settings.port) == ("0.0.0.0", CONTAINER["ports"][0]["containerPort"])
    # REDIS_URL names redis.yaml's Service, on its port; the example Secret does not override it.
    redis = urlsplit(settings.redis_url.value)
    service = manifests.by_name(DOCS, "Service", str(redis.hostname))
    assert [p["port"] for p in service["spec"]["ports"]] == [redis.port]
    manifests.assert_graceful_stop_fits(FOLDER, settings.graceful_shutdown_s)


def test_without_the_secret_s_key_the_real_youtube_client_refuses_to_start_saying_so() -> None:
    # Exit 2 with this one line (the pod's log), until the Secret is created.
    with pytest.raises(ConfigError, match="set YOUTUBE_API_KEY"):
        settings_of(None)


def test_redis_keeps_an_append_only_file_on_its_claim_and_refuses_to_evict() -> None:
    redis = manifests.one(DOCS, "StatefulSet", component="redis")
    (container,) = redis["spec"]["template"]["spec"]["containers"]
    args = container["args"]
    (claim,) = redis["spec"]["volumeClaimTemplates"]

    assert args[args.index("--appendonly") + 1] == "yes"
    assert args[args.index("--maxmemory-policy") + 1] == "noeviction"
    assert {"name": claim["metadata"]["name"], "mountPath": "/data"} in container["volumeMounts"]
    assert redis["spec"]["replicas"] == 1


def test_the_autoscaler_owns_the_pod_count_and_a_drain_leaves_pods_answering() -> None:
    hpa = manifests.one(DOCS, "HorizontalPodAutoscaler")
    pdb = manifests.one(DOCS, "PodDisruptionBudget")
    target = hpa["spec"]["scaleTargetRef"]

    assert (target["kind"], target["name"]) == ("Deployment", DEPLOYMENT["metadata"]["name"])
    # No replicas of its own: each `kubectl apply` would reset what the autoscaler chose.
    assert "replicas" not in DEPLOYMENT["spec"]
    assert 2 <= hpa["spec"]["minReplicas"] < hpa["spec"]["maxReplicas"]
    # On CPU, a share of the one core a pod's worker uses (its request).
    (metric,) = hpa["spec"]["metrics"]
    assert (
        metric["resource"]["name"] == "cpu" and 0 < metric["resource"]["target"]["averageUtilization"] < 100
    )
    assert CONTAINER["resources"]["requests"]["cpu"] == "1"
    # The budget selects exactly these pods and always leaves at least one of the fewest answering.
    assert pdb["spec"]["selector"]["matchLabels"] == DEPLOYMENT["spec"]["selector"]["matchLabels"]
    assert pdb["spec"]["maxUnavailable"] < hpa["spec"]["minReplicas"]
    # A rollout starts a pod before stopping one.
    assert DEPLOYMENT["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": 1, "maxUnavailable": 0}


def test_the_pods_write_only_temporary_files_on_an_empty_dir() -> None:
    (mount,) = CONTAINER["volumeMounts"]
    (volume,) = TEMPLATE["spec"]["volumes"]

    assert mount == {"name": volume["name"], "mountPath": "/tmp"}
    assert "emptyDir" in volume


def test_liveness_and_start_up_probe_healthz_and_readiness_readyz() -> None:
    assert manifests.probe_paths(CONTAINER) == {
        "livenessProbe": HEALTHZ,
        "startupProbe": HEALTHZ,
        "readinessProbe": READYZ,
    }


async def test_readiness_fails_while_redis_does_and_liveness_does_not() -> None:
    # A pod is taken out of the Service while Redis is down, never restarted for it.
    down = service(checks={"redis": False})
    paths = manifests.probe_paths(CONTAINER)

    assert (await down.get(paths["livenessProbe"])).status == 200
    assert (await down.get(paths["readinessProbe"])).status == 503
    assert (await service(checks={"redis": True}).get(paths["readinessProbe"])).status == 200
