"""deploy/kubernetes/demo/: the demo profile on Kubernetes, as `kubectl apply -f` takes it (read
statically: each document against the API's schemas, the variables against the settings, the
probes against the routes). The distributed profile's folder is the redis slice's
(test_kubernetes_distributed.py)."""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest

from influencer_stats.config.resolve import resolve
from influencer_stats.http.routes import HEALTHZ, READYZ
from tests import manifests
from tests.unit.http_api_support import service

FOLDER = manifests.KUBERNETES / "demo"
DOCS = manifests.documents(FOLDER)
((DEPLOYMENT, TEMPLATE, CONTAINER),) = manifests.api_containers(FOLDER)


def test_every_document_is_valid_against_every_supported_kubernetes_schema() -> None:
    manifests.assert_valid_against_every_schema(FOLDER)


def test_kubectl_applies_the_folder_as_it_is() -> None:
    manifests.assert_applies_as_it_is(FOLDER)


def test_every_variable_it_sets_is_a_setting() -> None:
    manifests.assert_every_variable_is_known(FOLDER)


def test_the_key_and_the_write_token_come_from_the_example_s_secret_optionally() -> None:
    manifests.assert_secret_references_name_the_example(FOLDER)
    names = {v["name"] for v in CONTAINER["env"]}

    assert {"YOUTUBE_API_KEY", "INFLUENCER_STATS_WRITE_TOKEN"} <= names
    # Never in the ConfigMap, whose values anyone reading the namespace sees.
    configmap = manifests.one(DOCS, "ConfigMap")
    assert names.isdisjoint(configmap["data"])


def test_nothing_runs_privileged_and_the_root_filesystem_is_read_only() -> None:
    manifests.assert_hardened(FOLDER)


def test_the_image_its_user_and_its_port_are_the_dockerfile_s() -> None:
    manifests.assert_the_image_as_the_dockerfile_builds_it(FOLDER)


def test_the_service_reaches_the_pod_on_its_named_port() -> None:
    manifests.assert_services_reach_their_pods(FOLDER)


@pytest.mark.parametrize("secret", [None, manifests.secret_example()], ids=["no-secret", "secret"])
def test_its_environment_resolves_to_the_demo_profile_listening_where_the_probes_knock(
    secret: dict[str, object] | None,
) -> None:
    settings = resolve(manifests.environment(DOCS, CONTAINER, secret))

    assert settings.profile == "demo"
    assert settings.host == "0.0.0.0"  # the kubelet probes the pod's address, not its loopback
    assert settings.port == CONTAINER["ports"][0]["containerPort"]
    assert (settings.write_token is None) == (secret is None)
    manifests.assert_graceful_stop_fits(FOLDER, settings.graceful_shutdown_s)


def test_it_writes_only_to_its_volumes_its_files_on_the_claim() -> None:
    settings = resolve(manifests.environment(DOCS, CONTAINER, None))
    mounts = {m["mountPath"]: m["name"] for m in CONTAINER["volumeMounts"]}
    volumes = {v["name"]: v for v in TEMPLATE["spec"]["volumes"]}
    claim = manifests.one(DOCS, "PersistentVolumeClaim")
    on_claim = [path for path, name in mounts.items() if "persistentVolumeClaim" in volumes[name]]

    assert [volumes[mounts[path]]["persistentVolumeClaim"]["claimName"] for path in on_claim] == [
        claim["metadata"]["name"]
    ]
    # Every file its choices write (the SQLite file, with the sqlite slice's store) on the claim.
    for name, path in manifests.written_paths(settings).items():
        assert PurePosixPath(path).parent == PurePosixPath(on_claim[0]), name
    # The claim is where INFLUENCER_STATS_DB is, whether or not the store chosen writes it.
    assert str(PurePosixPath(settings.db_path).parent) == on_claim[0]
    # Temporary files (a private PROMETHEUS_MULTIPROC_DIR with several workers) on an emptyDir:
    # the image sets no TMPDIR, so Python's tempfile uses /tmp.
    assert "emptyDir" in volumes[mounts["/tmp"]]
    assert mounts.keys() == {on_claim[0], "/tmp"}


def test_one_pod_at_a_time_on_its_volume() -> None:
    # SQLite is one file on one host: no second pod, none started before the last one let go.
    assert DEPLOYMENT["spec"]["replicas"] == 1
    assert DEPLOYMENT["spec"]["strategy"] == {"type": "Recreate"}
    assert manifests.one(DOCS, "PersistentVolumeClaim")["spec"]["accessModes"] == ["ReadWriteOnce"]
    # Nothing that would want more than one: no autoscaler, no budget that would block every drain.
    assert {doc["kind"] for doc in DOCS}.isdisjoint({"HorizontalPodAutoscaler", "PodDisruptionBudget"})


def test_liveness_and_start_up_probe_healthz_and_readiness_readyz() -> None:
    assert manifests.probe_paths(CONTAINER) == {
        "livenessProbe": HEALTHZ,
        "startupProbe": HEALTHZ,
        "readinessProbe": READYZ,
    }


async def test_each_probe_s_path_answers_200_from_the_service() -> None:
    svc = service(checks={"sqlite": True})

    for path in set(manifests.probe_paths(CONTAINER).values()):
        assert (await svc.get(path)).status == 200, path
