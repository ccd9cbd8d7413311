"""Readers of the videos a playlist or a channel holds (``algebras.sources.SourceReader``)."""
