"""``SourceReader`` wrapper: a ``sources.read`` span per read of a playlist or channel."""

from __future__ import annotations

from returns.result import Result, Success

from influencer_stats.algebras.sources import SourceReader
from influencer_stats.algebras.tracing import Spans
from influencer_stats.domain.models import CollectionSource, ReadError, VideoId


class TracedReader:
    """A ``sources.read`` span per read, with what was read and how many videos it held (its
    ``playlistItems.list`` and ``channels.list`` calls go out with this span's ``traceparent``)."""

    def __init__(self, inner: SourceReader, spans: Spans) -> None:
        self._inner = inner
        self._spans = spans

    async def videos(self, source: CollectionSource, limit: int) -> Result[tuple[VideoId, ...], ReadError]:
        attributes = {"source.kind": source.kind, "source.id": source.id}
        with self._spans.span("sources.read", attributes) as span:
            read = await self._inner.videos(source, limit)
            if isinstance(read, Success):
                span.note("source.videos", len(read.unwrap()))
            else:
                span.failed(read.failure())
            return read
