"""Interpreters of ``CollectionStore``."""
