"""The image run as deploy/kubernetes/demo/ runs it, without a cluster: a container given what the
pod spec gives (its ConfigMap, its user, no capability, no privilege escalation, a read-only root
filesystem, its memory limit, and each volume mounted where the spec mounts it, writable by the
pod's user as the kubelet makes it), which serves, writes its SQLite file and reads it back.

tests/unit/test_kubernetes_demo.py checks the manifests themselves against the schemas.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest

from influencer_stats.config.resolve import resolve
from tests import manifests
from tests.containers import Endpoint, service_container
from tests.support import WORKER_COUNTS
from tests.write_load import videos_of

FOLDER = manifests.KUBERNETES / "demo"
DOCS = manifests.documents(FOLDER)
((_, TEMPLATE, CONTAINER),) = manifests.api_containers(FOLDER)


@pytest.fixture(scope="module", params=WORKER_COUNTS, ids=[f"workers-{n}" for n in WORKER_COUNTS])
def pod(request: pytest.FixtureRequest) -> Iterator[Endpoint]:
    # Its ConfigMap (the address is the fixture's: a free port on loopback with host networking);
    # with several workers their metrics share a directory made in /tmp.
    env = {**manifests.environment(DOCS, CONTAINER, None), "INFLUENCER_STATS_WORKERS": request.param}
    with service_container(env, options=manifests.docker_options(TEMPLATE, CONTAINER)) as endpoint:
        yield endpoint


def test_the_pod_s_container_serves_and_keeps_its_collections_on_the_volume(pod: Endpoint) -> None:
    with httpx.Client(base_url=pod.url, timeout=10) as client:
        for path in set(manifests.probe_paths(CONTAINER).values()):
            assert client.get(path).status_code == 200, path
        collection = f"/collections/{uuid.uuid4()}"
        put = client.put(collection, json={"videos": videos_of(7, 3)})
        assert put.status_code == 201, put.text
        stats = client.get(f"{collection}/stats")
        assert stats.status_code == 200, stats.text
        assert stats.json()["videos"] == 3

    container = pod.container.get_wrapped_container()
    # Each file its choices write (the SQLite file, with the sqlite slice), where the claim is mounted.
    for path in manifests.written_paths(resolve(manifests.environment(DOCS, CONTAINER, None))).values():
        assert container.exec_run(["ls", path]).output.decode().strip() == path
    # Nothing else is writable: the root filesystem is read-only.
    touched = container.exec_run(["touch", "/var/lib/influencer-stats/elsewhere"])
    assert touched.exit_code != 0 and "Read-only file system" in touched.output.decode()
