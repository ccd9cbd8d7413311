"""Slice ``cors``: CORS for the origins ``INFLUENCER_STATS_CORS_ORIGINS`` allows (off while unset).

Its layer of the answer (``http.cors``, ``bootstrap.parts.EDGE_LAYERS``) answers a preflight from
an allowed origin with a 204 and adds the CORS headers to every other answer to it; with it on,
the servers hand over ``Origin`` and ``Access-Control-Request-Method`` (``EdgeLayer.reads_origin``).
Without this slice the setting is read by nothing and an OPTIONS is the 405 it always was.
"""

from __future__ import annotations

from influencer_stats.algebras import EventLog
from influencer_stats.bootstrap.parts import EDGE_LAYERS
from influencer_stats.bootstrap.slices.slice import Slice
from influencer_stats.bootstrap.wiring import Wiring
from influencer_stats.http.layers import EdgeLayer

SLICE = Slice(
    "cors",
    "CORS for the origins INFLUENCER_STATS_CORS_ORIGINS allows: preflights, the headers of every answer",
    files=(
        "influencer_stats/http/cors.py",
        "tests/unit/test_http_api_cors.py",
        "tests/integration/test_cors_http.py",
    ),
    modules=("influencer_stats.http.cors", "influencer_stats.bootstrap.slices.cors"),
)


def _cors(wiring: Wiring, _: EventLog) -> EdgeLayer | None:
    from influencer_stats.http.cors import cors_layer, parse_origins

    origins = parse_origins(wiring.settings.cors_origins or "")
    return cors_layer(origins, wiring.metrics) if origins else None


EDGE_LAYERS.append(_cors)
