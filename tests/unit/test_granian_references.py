"""The granian server's runner against the perf lab's RSGI references: the references are built
with the arguments the service gives ``Granian(...)`` (a test of the ``granian_server`` slice)."""

from __future__ import annotations

from typing import Any

import pytest


def test_the_rsgi_references_are_built_with_the_services_granian_arguments(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import argparse

    import granian

    from influencer_stats.config.resolve import resolve
    from influencer_stats.servers.granian import runner as serving
    from influencer_stats.serving.lifeline import Heartbeats, Watchdog
    from perf.profiles import granian_flags
    from perf.rsgi_ceiling import add_granian_arguments, granian_kwargs, granian_options
    from tests.support import instead_of_slices

    captured: dict[str, Any] = {}

    class Recorder:
        def __init__(self, target: str, **kwargs: Any) -> None:
            captured.update(kwargs)

        def on_startup(self, hook: object) -> None:
            pass

        def serve(self) -> None:
            pass

    monkeypatch.setattr(granian, "Granian", Recorder)
    monkeypatch.setattr(serving, "claim_the_address", lambda host, port: None)
    # Nor the lifeline's name (a machine-wide one, 127.0.0.1:8080's): held by any other service or
    # run of this test on the machine at that moment, it failed this one with "address already in use".
    monkeypatch.setattr(Watchdog, "open", classmethod(lambda cls, lifeline: cls(Heartbeats(1.0), None)))
    serving.run(resolve({"YOUTUBE_API_KEY": "perf"}, {"profile": "fast", **instead_of_slices("fast")}))
    service = {k: v for k, v in captured.items() if k not in ("factory", "address", "port")}

    parser = argparse.ArgumentParser()
    add_granian_arguments(parser)
    assert granian_kwargs(granian_options(parser.parse_args(granian_flags()))) == service  # what the lab runs
    assert granian_kwargs(granian_options(parser.parse_args([]))) == service  # the defaults, run by hand
    assert service["workers"] == 1


def test_auto_keeps_the_references_of_each_server() -> None:
    # Granian's profile (fast) beside the raw RSGI app; its uncached variant beside the minimal service.
    from perf.references import MINIMAL, RSGI_CEILING, reference_for
    from perf.specs import lab_choices

    assert reference_for(lab_choices("fast")) == RSGI_CEILING
    assert reference_for(lab_choices("fast+cache=none"), "auto") == MINIMAL


@pytest.mark.parametrize(
    ("spec", "reference"),
    [
        ("fast", "rsgi-ceiling"),  # granian, stats cache
        ("v5", "rsgi-ceiling"),  # granian, stats cache, per-video client
        ("fast+cache=none", "minimal"),  # granian, no cache: the same work without the architecture
        ("v5+cache=none", "minimal"),
    ],
)
def test_a_granian_profile_is_paired_with_the_rsgi_references(spec: str, reference: str) -> None:
    from perf.references import MINIMAL, RSGI_CEILING, reference_for
    from perf.specs import lab_choices

    assert (RSGI_CEILING, MINIMAL) == ("rsgi-ceiling", "minimal")
    assert reference_for(lab_choices(spec)) == reference
