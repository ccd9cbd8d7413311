"""The image run as deploy/kubernetes/distributed/ runs it, without a cluster: two containers given
what the pod spec gives (its ConfigMap, its user, no capability, a read-only root filesystem, its
memory limit, /tmp its only writable place) on one Redis, each answering what the other wrote.

The ConfigMap's own keyless trial (``INFLUENCER_STATS_VIDEO_CLIENT: fake``) stands in for the
real YouTube client, and the Secret's REDIS_URL (which wins over the ConfigMap's) names the test's
Redis. The redis slice's, as the folder is.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import ExitStack

import httpx
import pytest

from tests import manifests
from tests.containers import Endpoint, peer_address, redis_server, service_container
from tests.support import WORKER_COUNTS, installed_env
from tests.write_load import videos_of

FOLDER = manifests.KUBERNETES / "distributed"
DOCS = manifests.documents(FOLDER)
((_, TEMPLATE, CONTAINER),) = manifests.api_containers(FOLDER)


@pytest.fixture(scope="module", params=WORKER_COUNTS, ids=[f"workers-{n}" for n in WORKER_COUNTS])
def pods(request: pytest.FixtureRequest) -> Iterator[list[Endpoint]]:
    with ExitStack() as running:
        redis = running.enter_context(redis_server(["--appendonly", "yes"]))
        secret = {
            "metadata": {"name": "influencer-stats"},
            "stringData": {"REDIS_URL": f"redis://{peer_address(redis)}/0"},
        }
        env = manifests.environment(DOCS, CONTAINER, secret)
        env |= {"INFLUENCER_STATS_VIDEO_CLIENT": "fake", "INFLUENCER_STATS_WORKERS": request.param}
        env |= installed_env(env)
        options = manifests.docker_options(TEMPLATE, CONTAINER)
        yield [running.enter_context(service_container(env, options=options)) for _ in range(2)]


def test_each_pod_answers_what_the_other_wrote_with_a_read_only_root(pods: list[Endpoint]) -> None:
    first, second = (httpx.Client(base_url=pod.url, timeout=10) for pod in pods)
    with first, second:
        for path in set(manifests.probe_paths(CONTAINER).values()):
            assert first.get(path).status_code == second.get(path).status_code == 200, path
        collection = f"/collections/{uuid.uuid4()}"
        assert first.put(collection, json={"videos": videos_of(11, 3)}).status_code == 201
        stats = second.get(f"{collection}/stats")
        assert stats.status_code == 200, stats.text
        assert stats.json()["videos"] == 3

    for pod in pods:
        touched = pod.container.get_wrapped_container().exec_run(["touch", "/var/lib/influencer-stats/x"])
        assert touched.exit_code != 0 and "Read-only file system" in touched.output.decode()
