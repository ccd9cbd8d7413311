"""A span per Redis command or pipeline: the redis-py client the root opens when tracing is on."""

from __future__ import annotations

from typing import Any

from opentelemetry.trace import SpanKind, Tracer, get_current_span
from redis.asyncio import Redis
from redis.asyncio.client import Pipeline


def _statement(args: tuple[Any, ...]) -> str:
    name = args[0]
    return name.decode() if isinstance(name, bytes) else str(name)


class TracedPipeline(Pipeline):
    """A pipeline whose ``execute`` within a trace is one CLIENT span ``redis PIPELINE`` (its
    commands counted)."""

    tracer: Tracer

    async def execute(self, raise_on_error: bool = True) -> list[Any]:
        if not get_current_span().get_span_context().is_valid:  # outside a trace, as TracedRedis
            return await super().execute(raise_on_error)
        commands = len(self.command_stack)
        with self.tracer.start_as_current_span(
            "redis PIPELINE",
            kind=SpanKind.CLIENT,
            attributes={"db.system.name": "redis", "db.operation.batch.size": commands},
        ):
            return await super().execute(raise_on_error)


class TracedRedis(Redis):
    """The redis-py client with a CLIENT span per command (``redis <COMMAND>``; scripts are
    ``EVALSHA``); a failing command's exception is recorded on its span, then raised as before.

    Only commands sent within a trace get one: the readiness PING every worker sends every few
    seconds, outside any request, would otherwise be a trace of its own each time."""

    def __init__(self, *args: Any, tracer: Tracer, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._tracer = tracer

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        if not get_current_span().get_span_context().is_valid:
            return await super().execute_command(*args, **options)  # type: ignore[no-untyped-call]
        operation = _statement(args).upper()
        with self._tracer.start_as_current_span(
            f"redis {operation}",
            kind=SpanKind.CLIENT,
            attributes={"db.system.name": "redis", "db.operation.name": operation},
        ):
            return await super().execute_command(*args, **options)  # type: ignore[no-untyped-call]

    def pipeline(self, transaction: bool = True, shard_hint: str | None = None) -> TracedPipeline:
        pipe = TracedPipeline(self.connection_pool, self.response_callbacks, transaction, shard_hint)
        pipe.tracer = self._tracer
        return pipe
