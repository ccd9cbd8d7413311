"""The service's access log and nginx's name the same request id: the two logs join (the
``access_log`` slice's part of test_nginx_request_id, whose nginx on the template it runs in
front of a service with the access log on)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from tests.integration.test_nginx_request_id import BOUND_S, balancer, nginx_ids
from tests.support import RunningService, running_service, wait_for

__all__ = ["balancer"]  # the fixture this module's tests take, in front of its own upstream


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningService]:
    log = tmp_path_factory.mktemp("upstream") / "service.log"
    with running_service([], log, env={"INFLUENCER_STATS_ACCESS_LOG": "on"}) as running:
        yield running


def _service_lines(upstream: RunningService, request_id: str) -> list[dict[str, object]]:
    return [
        line
        for line in (orjson.loads(text) for text in upstream.output().splitlines() if text.startswith("{"))
        if line.get("event") == "http.access" and line.get("request_id") == request_id
    ]


@pytest.mark.parametrize("sent", [None, "client-id-kept"])
def test_nginx_s_log_and_the_service_s_access_log_name_the_same_id(
    balancer: tuple[str, Path], upstream: RunningService, sent: str | None
) -> None:
    url, access_log = balancer
    path = f"/collections/n-{uuid.uuid4().hex}/stats"
    headers = {} if sent is None else {"x-request-id": f"{sent}-{uuid.uuid4().hex[:8]}"}

    response = httpx.get(url + path, headers=headers, timeout=BOUND_S)

    request_id = response.headers["x-request-id"]
    assert request_id == headers.get("x-request-id", request_id)
    assert sent is not None or re.fullmatch(r"[0-9a-f]{32}", request_id)  # nginx's $request_id
    assert wait_for(lambda: nginx_ids(access_log, path) == [request_id], BOUND_S), access_log.read_text()
    assert wait_for(lambda: len(_service_lines(upstream, request_id)) == 1, BOUND_S), upstream.output()[
        -2000:
    ]
    (line,) = _service_lines(upstream, request_id)
    assert (line["route"], line["status"]) == ("/collections/{id}/stats", 404)
