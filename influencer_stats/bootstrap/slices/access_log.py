"""Slice ``access_log``: one JSON line per request (``INFLUENCER_STATS_ACCESS_LOG=on``; off by default).

Its layer of the answer (``http.access_log``, ``bootstrap.parts.EDGE_LAYERS``) is the outermost,
so it logs every answer (a CORS preflight's too) and every refusal before any route: the request
id, method, route, status, bytes and duration, as an ``http.access`` event through the process's
log. Without this slice the setting is read by nothing.
"""

from __future__ import annotations

from influencer_stats.algebras import EventLog
from influencer_stats.bootstrap.parts import EDGE_LAYERS
from influencer_stats.bootstrap.slices.slice import Slice
from influencer_stats.bootstrap.wiring import Wiring
from influencer_stats.http.layers import EdgeLayer

SLICE = Slice(
    "access_log",
    "one http.access line per request through the log (INFLUENCER_STATS_ACCESS_LOG=on)",
    files=(
        "influencer_stats/http/access_log.py",
        "tests/unit/test_http_api_access_log.py",
        "tests/integration/test_access_log_http.py",
        "tests/integration/test_access_log_nginx.py",
    ),
    modules=("influencer_stats.http.access_log", "influencer_stats.bootstrap.slices.access_log"),
)


def _access_log(wiring: Wiring, log: EventLog) -> EdgeLayer | None:
    from influencer_stats.http.access_log import access_log_layer

    return access_log_layer(log) if wiring.settings.access_log == "on" else None


EDGE_LAYERS.append(_access_log)
