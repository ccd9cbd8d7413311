"""The day's quota counted in the SQLite file (``--quota sqlite``, the joint ``quota__sqlite``)
through a restart of the service: a real process stopped and started again on the same files, the
YouTube double as its own process, its calls counted. (``memory`` forgets what it spent: the docs
say so, docs/quota.md.)"""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.integration.test_hardening_upstream import PROBLEM, calls_made, new_videos, youtube_env
from tests.integration.test_quota_hardening import double as double  # the fixture
from tests.support import SERVERS, profile_args, running_service

BUDGET = 3


def test_a_restarted_process_does_not_spend_the_days_budget_again(double: str, tmp_path: Path) -> None:
    # On the core's server only: the count is the quota slice's, behind the edge of every server.
    argv = [*profile_args("youtube"), "--server", SERVERS[0], "--quota", "sqlite"]
    env = youtube_env(double, INFLUENCER_STATS_QUOTA_PER_DAY=str(BUDGET))
    asked = iter(range(100))

    def ask(client: httpx.Client) -> httpx.Response:
        """The stats of a new collection of one video never fetched: one call, one unit."""
        n = next(asked)
        assert client.put(f"/collections/q{n}", json={"videos": new_videos(n, 1)}).is_success
        return client.get(f"/collections/q{n}/stats")

    answers = []
    for _ in range(2):  # the same log, so the same files: the second process is the first restarted
        with (
            running_service(argv, tmp_path / "service.log", env=env) as service,
            httpx.Client(base_url=service.url, timeout=30) as client,
        ):
            answers.append([ask(client) for _ in range(2)])

    first, restarted = answers
    assert [r.status_code for r in first] == [200, 200]
    assert restarted[0].status_code == 200  # the day's last unit
    assert (restarted[1].status_code, restarted[1].json()["type"]) == (503, PROBLEM + "quota-exhausted")
    assert calls_made(double) == BUDGET
