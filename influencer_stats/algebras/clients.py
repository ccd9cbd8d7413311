"""Who is asking: what the edge knows of the client of the request being answered.

The edge sets ``CALLER`` for each request it answers (``HttpApi``), so work done on its behalf
(a YouTube call spending a unit) can tell whose it is without every layer passing it along. A
task started while a request is answered inherits it; background work (a refresh on a timer)
has none.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import NamedTuple


class Caller(NamedTuple):
    """The request's ``Authorization`` (every line joined), the address the server saw it come
    from, and its ``X-Forwarded-For`` (every line joined), each as received: nothing is decided
    here (a share's ``client_of`` decides who that is)."""

    authorization: str | None
    peer: str | None
    forwarded_for: str | None


#: The client of the request being answered (None: no request, the service's own work).
CALLER: ContextVar[Caller | None] = ContextVar("caller", default=None)
