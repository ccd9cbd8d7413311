"""Tracing a read of a playlist (``sources.read``), end to end: a slice's own span through
``Tracing.spans()``. It needs both the ``tracing`` and the ``sources`` slices, so both declare
this file (removing either removes it). The receiver, the double and the services:
tracing_support's fixtures.
"""

from __future__ import annotations

import secrets

import httpx

from tests.integration.tracing_support import (
    VIDEOS,
    new_traceparent,
    one_span,
    receiver,
    service,
    wait_for_trace,
    youtube,
)
from tests.integration.youtube_clients_support import HTTP_TIMEOUT_S, YouTubeDouble
from tests.otlp_receiver import Receiver
from tests.support import RunningService

__all__ = ["receiver", "service", "youtube"]  # the fixtures this module's tests take


def test_a_put_from_a_playlist_is_one_trace_with_the_read_under_the_request(
    service: RunningService, receiver: Receiver, youtube: tuple[str, YouTubeDouble]
) -> None:
    youtube[1].playlist("PLtraced", [str(v) for v in VIDEOS])
    traceparent, trace_id, caller_span = new_traceparent()
    with httpx.Client(base_url=service.url, timeout=HTTP_TIMEOUT_S) as http:
        saved = http.put(
            f"/collections/traced-{secrets.token_hex(4)}",
            json={"playlist": "PLtraced"},
            headers={"traceparent": traceparent},
        )
    assert saved.status_code == 201, saved.text

    spans = wait_for_trace(receiver, trace_id, "PUT /collections/{id}", "sources.read")
    request, read = one_span(spans, "PUT /collections/{id}"), one_span(spans, "sources.read")
    assert (request.parent_id, read.parent_id) == (caller_span, request.span_id)
    assert read.attributes == {"source.kind": "playlist", "source.id": "PLtraced", "source.videos": 2}
