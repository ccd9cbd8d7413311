"""What a slice folds around ``HttpApi``'s answer (an ``EdgeLayer``), only while it is on, so that
a service without it answers with no layer added: CORS (the ``cors`` slice) and the access log
(the ``access_log`` slice) are such layers. The root builds each installed slice's
(``bootstrap.edge.EDGE_LAYERS``) and hands ``HttpApi`` those that are on, outermost first."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from influencer_stats.http.incoming import Incoming
from influencer_stats.http.problems import Reply

#: An answer to one request, with the request's id (``HttpApi.answer``).
Answer = Callable[[Incoming], Awaitable[tuple[Reply, str]]]
#: Told of each request a server refused before any route answered it (no route, a method HTTP
#: does not define): its request id, method, route label (``unmatched``) and the refusal.
Refused = Callable[[str, str, str, Reply], None]


@dataclass(frozen=True, slots=True)
class EdgeLayer:
    """A layer of the answer: ``wrap`` takes the answer inside it and returns one; ``refused`` is
    told of the refusals that no answer sees; ``reads_origin``: the servers must hand over
    ``Origin`` and ``Access-Control-Request-Method`` (``Incoming.origin``, ``cors_method``), which
    they read only then."""

    wrap: Callable[[Answer], Answer]
    refused: Refused | None = None
    reads_origin: bool = False
