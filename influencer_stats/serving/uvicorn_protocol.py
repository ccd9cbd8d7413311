"""uvicorn's httptools protocol with the limits a public service needs.

uvicorn 0.55 with httptools has none of these, and attacks on the uvicorn
servers (``starlette``, ``asgi``) showed what that costs:

- **Pipelining.** Every finished response resumes reading, and a read (up to
  256 KB) is parsed whole: a client that pipelines small GETs and never reads
  queued a parsed request (~1.4 KB) per 43 bytes it sent, 1.3 GB in 10 s.
  Here bytes are parsed in slices of ``_SLICE``; while ``max_pipelined``
  requests wait behind the one being answered, the rest stays unparsed and
  reading pauses. Unsent response bytes are already bounded (uvicorn's
  ``send`` waits while the transport is over its high-water mark); a client
  that reads nothing for ``send_timeout_s`` is cut off.
- **Slowloris.** No timeout applied before a request's headers were complete
  or while its body arrived. Headers must now arrive within
  ``header_timeout_s`` (counted from the connection's opening for its first
  request: an idle new connection is closed) and a body within
  ``body_timeout_s`` of its headers, else 408 and close. Neither runs while
  reading is paused on the server's side.
- **Over the concurrency limit** uvicorn answered every request, ``/healthz``
  included, with a bare text 503. Here the paths in ``exempt_paths`` are
  still served, and the others get a problem+json 503 with ``Retry-After``.
- **Header limits.** httptools (llhttp) has none: four 100 MB headers were
  accepted. Beyond ``max_header_bytes`` (the target and header fields) or
  ``max_headers`` fields the answer is 431 and the connection closes; a
  header still arriving is cut off at most one slice past the limit.

A refusal (408, 431) is written once every earlier response on the
connection is sent, and the connection closes. ``protocol_class(limits)`` is
what ``serving.uvicorn`` passes as ``uvicorn.Config(http=...)``; ``uvicorn
main:app --http`` can name ``serving.uvicorn.EnvironmentProtocol``, which
takes its limits from the settings in the environment.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

from influencer_stats.http import problems
from influencer_stats.http.problems import Reply, problem
from influencer_stats.serving.uvicorn_refusals import overloaded, refusal_bytes

if TYPE_CHECKING:
    import asyncio


#: Bytes parsed at a time: bounds how many requests one read can queue, and
#: how far past the limit a header still arriving can grow.
_SLICE = 4096


@dataclass(frozen=True, slots=True)
class Limits:
    """What one connection may cost, from the settings (every value is required)."""

    header_timeout_s: float
    body_timeout_s: float
    send_timeout_s: float
    max_header_bytes: int
    max_headers: int
    max_pipelined: int
    #: Paths answered even over the concurrency limit (liveness must not fail under load).
    exempt_paths: frozenset[str]


def protocol_class(limits: Limits) -> type[HardenedHttpToolsProtocol]:
    """The class to pass as ``uvicorn.run(http=...)``, bound to ``limits``."""

    class Bound(HardenedHttpToolsProtocol):
        pass

    Bound.limits = limits
    return Bound


class _GatedFlow(FlowControl):
    """uvicorn's flow control, but reading resumes only while ``may_read()`` says so.

    uvicorn resumes reading on every ``receive()`` and every finished response.
    """

    def __init__(self, transport: asyncio.Transport, may_read: Callable[[], bool]) -> None:
        super().__init__(transport)
        self._may_read = may_read

    def resume_reading(self) -> None:
        if self.read_paused and self._may_read():
            super().resume_reading()


class HardenedHttpToolsProtocol(HttpToolsProtocol):
    """``HttpToolsProtocol`` with the limits of ``limits`` (see the module's doc)."""

    limits: ClassVar[Limits]

    def __init__(
        self,
        config: Any,
        server_state: Any,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        # The concurrency limit is enforced in on_headers_complete, with exemptions.
        self._concurrency, self.limit_concurrency = self.limit_concurrency, None
        self._held = b""  # read but not parsed: the pipeline is full
        self._refusal: bytes | None = None  # once set, nothing more is read or parsed
        self._in_head = self._in_body = False
        self._head_bytes = self._unseen = self._fields = 0
        self._body_left: int | None = None  # of a Content-Length body, once asked for
        self._progress = False  # a head callback ran during the current slice
        self._head_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None
        self._send_timer: asyncio.TimerHandle | None = None
        self._running: RequestResponseCycle | None = None  # the request being answered

    # Connection events

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.flow = _GatedFlow(transport, self._may_read)
        self._head_timer = self.loop.call_later(self.limits.header_timeout_s, self._head_timed_out)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)  # tells only the newest request, not the one being answered
        running = self._running
        if running is not None and not running.response_complete:
            running.disconnected = True
            running.message_event.set()
        self._held = b""
        for timer in (self._head_timer, self._body_timer, self._send_timer):
            if timer is not None:
                timer.cancel()

    def data_received(self, data: bytes) -> None:
        if self._refusal is not None:
            return
        if self._held:  # keep the order: earlier bytes still wait
            self._held += data
            self.flow.pause_reading()
            return
        self._feed(data)

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._send_timer is None:
            self._send_timer = self.loop.call_later(self.limits.send_timeout_s, self._send_timed_out)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._send_timer is not None:
            self._send_timer.cancel()
            self._send_timer = None

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: Any) -> None:
        self._running = cycle
        super()._start_asgi_task(cycle, app)

    def on_response_complete(self) -> None:
        super().on_response_complete()  # starts the next queued request, if any
        if self._refusal is not None:
            if self.cycle.response_complete:
                self._send_refusal()
        elif self._held and len(self.pipeline) < self.limits.max_pipelined and self._parsing():
            held, self._held = self._held, b""
            self._feed(held)
            self.flow.resume_reading()

    # Parsing, a slice at a time

    def _feed(self, data: bytes) -> None:
        start, size = 0, len(data)
        while start < size:
            if len(self.pipeline) >= self.limits.max_pipelined:
                self._held = data[start:]
                self.flow.pause_reading()
                break
            step = max(_SLICE, self._content_left()) if self._in_body else _SLICE
            piece = data[start : start + step] if start or size > step else data
            start += len(piece)
            self._progress = False
            super().data_received(piece)
            if not self._progress and (self._in_head or self._in_body):
                # No callback: all of it went into one unfinished field (or bytes llhttp skips).
                self._unseen += len(piece)
                self._check_head()
            if start < size and not self._parsing():
                return
        if self._refusal is None:
            if self._in_head and self._head_timer is None:
                self._head_timer = self.loop.call_later(self.limits.header_timeout_s, self._head_timed_out)
            if self._in_body and self._body_timer is None:
                self._body_timer = self.loop.call_later(self.limits.body_timeout_s, self._body_timed_out)

    def _parsing(self) -> bool:
        return (
            self._refusal is None
            and not self.transport.is_closing()  # (also after connection_lost, which drops the parser)
            and not self.parser.should_upgrade()
        )

    def _content_left(self) -> int:
        """Bytes of the current body still to come, when Content-Length says (parsed at once)."""
        if self._body_left is None:
            declared = next((value for name, value in self.headers if name == b"content-length"), b"")
            self._body_left = int(declared) if declared.isdigit() else 0
        return self._body_left

    def _may_read(self) -> bool:
        return not self._held and self._refusal is None and len(self.pipeline) < self.limits.max_pipelined

    # Parser callbacks

    def on_message_begin(self) -> None:
        if self._refusal is None:
            super().on_message_begin()
            self._progress = self._in_head = True
            self._head_bytes = self._unseen = self._fields = 0

    def on_url(self, url: bytes) -> None:
        if self._refusal is None:
            super().on_url(url)
            self._progress, self._unseen = True, 0  # the URL holds what went unseen
            self._head_bytes += len(url)
            self._check_head()

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._refusal is None:
            self._progress, self._unseen = True, 0  # the field holds what went unseen
            self._head_bytes += len(name) + len(value) + 4  # ": " and CRLF
            self._fields += 1
            self._check_head()
            if self._refusal is None:
                super().on_header(name, value)

    def on_headers_complete(self) -> None:
        if self._refusal is not None:
            return
        self._progress, self._in_head = True, False
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        limit = self._concurrency
        if (
            limit is not None
            and (len(self.connections) >= limit or len(self.tasks) >= limit)
            and self.url.partition(b"?")[0].decode("latin-1") not in self.limits.exempt_paths
        ):
            app, self.app = self.app, overloaded
            try:
                super().on_headers_complete()
            finally:
                self.app = app
        else:
            super().on_headers_complete()
        self._in_body, self._body_left = True, None

    def on_body(self, body: bytes) -> None:
        if self._refusal is None:
            self._progress, self._unseen = True, 0
            if self._body_left is not None:
                self._body_left -= len(body)
            super().on_body(body)

    def on_message_complete(self) -> None:
        if self._refusal is None:
            self._in_body = False
            if self._body_timer is not None:
                self._body_timer.cancel()
                self._body_timer = None
            super().on_message_complete()

    # Limits

    def _check_head(self) -> None:
        limits = self.limits
        if self._head_bytes + self._unseen > limits.max_header_bytes or self._fields > limits.max_headers:
            self._refuse(
                problem(
                    431,
                    "headers-too-large",
                    "Request header fields too large",
                    f"the request target and headers may hold at most {limits.max_header_bytes} bytes "
                    f"in at most {limits.max_headers} fields",
                )
            )

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.flow.read_paused:  # the server is not reading: not the client's fault
            self._head_timer = self.loop.call_later(self.limits.header_timeout_s, self._head_timed_out)
        elif self._in_head:
            self._refuse(problems.timeout("header", self.limits.header_timeout_s))
        else:  # a new connection that never sent a request
            self.transport.close()

    def _body_timed_out(self) -> None:
        self._body_timer = None
        if self.flow.read_paused or self.cycle.waiting_for_100_continue:  # waiting on the server
            self._body_timer = self.loop.call_later(self.limits.body_timeout_s, self._body_timed_out)
        else:
            self._refuse(problems.timeout("body", self.limits.body_timeout_s))

    def _send_timed_out(self) -> None:
        self._send_timer = None
        self.transport.abort()  # close() would wait for the buffer to drain: it never will

    def _refuse(self, reply: Reply) -> None:
        """Read nothing more; answer ``reply`` and close once earlier responses are sent.

        Mid-body (a body timeout, trailers over the limit), the request is the one
        refused: answered if its app still waits for the body, else the connection closes.
        """
        self._refusal = refusal_bytes(reply, self.server_state.default_headers)
        self._held = b""
        self.flow.pause_reading()
        for timer in (self._head_timer, self._body_timer):
            if timer is not None:
                timer.cancel()
        self._head_timer = self._body_timer = None
        cycle: RequestResponseCycle | None = self.cycle  # None before the first request
        if self._in_body and cycle is not None:
            if not self.pipeline and not cycle.response_started:  # its app waits in receive()
                self.transport.write(self._refusal)
                # As on a lost connection: receive() returns http.disconnect, send() writes nothing.
                cycle.disconnected = True
                cycle.message_event.set()
            self.transport.close()
        elif cycle is None or cycle.response_complete:
            self._send_refusal()

    def _send_refusal(self) -> None:
        if self._refusal and not self.transport.is_closing():
            self.transport.write(self._refusal)
        self.transport.close()
