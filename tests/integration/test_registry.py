"""Every registered choice of every slot builds, works and closes, against local doubles, and
its builder does what its entry declares (``bootstrap.registry.Entry``).

Parametrized from the registries themselves: a name registered without a working builder fails
here, in CI, never at a user's start-up; so does a builder that leaves out a duty, or an entry
that declares one its builder does not do:

- the files it writes are the ones its ``paths`` name (each test points every declared path into
  a folder not yet made): a file written anywhere in the checkout fails, so does a declared file
  not written, or one whose folder the builder did not create;
- ``/readyz`` checks what its ``ready`` names, no more, and each check answers;
- once closed, nothing it opened is left: no file descriptor, socket, asyncio task or thread (an
  executor not shut down keeps its threads).
- it reaches only the servers its ``needs`` name: Redis and the OTLP receiver are started only for
  choices that declare them (``tests/needs.py``); a builder that asks for Redis undeclared fails.
"""

from __future__ import annotations

import asyncio
import io
import os
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from returns.result import Success

from influencer_stats.bootstrap.logs import LOGGERS
from influencer_stats.bootstrap.registry import Slot
from influencer_stats.bootstrap.root import open_http_api
from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.config.resolve import resolve
from influencer_stats.domain.models import CollectionId
from influencer_stats.http.api import HttpApi
from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from influencer_stats.servers import server as server_named
from influencer_stats.settings import Settings
from tests.declared_paths import redirected_paths
from tests.needs import chosen, resolve_needing
from tests.support import A_YOUTUBE_CLIENT, ROOT
from youtube_double import running_double

CHOICES = [(slot, name) for slot in SLOTS.values() for name in slot.names() if slot.name != "server"]
every_choice = pytest.mark.parametrize(("slot", "name"), CHOICES, ids=[f"{s.name}={n}" for s, n in CHOICES])
#: Folders of the checkout no build may write into but that hold no files of the project.
NOT_THE_PROJECT = {".git", "__pycache__"}


@pytest.fixture
async def double_url() -> AsyncIterator[str]:
    async with running_double() as double:
        yield double.url


@pytest.fixture
def environ(double_url: str, tmp_path: Path) -> dict[str, str]:
    return {"YOUTUBE_API_URL": double_url, **redirected_paths(tmp_path / "files")}


@pytest.fixture
def settings(slot: Slot, name: str, environ: dict[str, str], request: pytest.FixtureRequest) -> Settings:
    """The choice under test, and the servers its stack declares it needs (``tests/needs.py``):
    Redis (its own key prefix: what one test cached, the next does not find), an OTLP receiver."""
    # A real client of the same kind, so the wrapper and cache choices are not built around the fake.
    base = {"video_client": A_YOUTUBE_CLIENT} if slot.name != "video_client" else {}
    return resolve_needing(request, environ, {**base, slot.name: name})


@dataclass
class Served:
    api: HttpApi  # kept: what it holds is not closed by the garbage collector behind a builder's back
    saved: object
    answer: Any
    ready: dict[str, bool]
    log: list[dict[str, Any]]


async def _serve(settings: Settings, slot: str, name: str) -> Served:
    """Open the API of ``settings``, save a collection, read its stats and /readyz's checks, close."""
    stdout = io.BytesIO()
    collection = CollectionId(f"registry-{slot}-{name}")
    videos = (synthetic_video_id(1), synthetic_video_id(2), synthetic_video_id(2))
    async with open_http_api(settings, stdout) as api:
        saved = await api.store.save(collection, videos)
        answer = await api.stats.stats(collection)
        ready = {check: await answers() for check, answers in api.checks.items()}
    events = LOGGERS[settings.choices.one("logger")].events  # read where the logger declares it writes
    written = (
        stdout.getvalue()
        if events == "stdout"
        else await asyncio.to_thread(Path(getattr(settings, events)).read_bytes)
    )
    return Served(api, saved, answer, ready, [orjson.loads(line) for line in written.splitlines()])


@every_choice
async def test_every_registered_choice_builds_serves_stats_and_closes(
    slot: Slot, name: str, settings: Settings
) -> None:

    served = await _serve(settings, slot.name, name)

    assert isinstance(served.saved, Success)
    assert isinstance(served.answer, Success), served.answer
    assert served.answer.unwrap().stats.videos == 2
    started = [e for e in served.log if e["event"] == "service.started"]
    if not LOGGERS[settings.choices.one("logger")].silent:
        assert started and all(started[0][s] == settings.choices.text(s) for s in SLOTS)


def _checkout() -> dict[str, tuple[int, int]]:
    """Every file of the checkout (outside ``NOT_THE_PROJECT`` and virtualenvs): path → mtime, size."""
    files = {}
    for folder, subfolders, names in os.walk(ROOT):
        subfolders[:] = [
            s for s in subfolders if s not in NOT_THE_PROJECT and not Path(folder, s, "pyvenv.cfg").exists()
        ]
        for file in names:
            path = Path(folder, file)
            try:
                status = path.stat()
            except OSError:  # gone meanwhile
                continue
            files[str(path.relative_to(ROOT))] = (status.st_mtime_ns, status.st_size)
    return files


@every_choice
async def test_a_choice_writes_no_file_into_the_checkout(
    slot: Slot, name: str, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # where a relative default lands when a user runs main.py
    before = _checkout()

    await _serve(settings, slot.name, name)

    after = _checkout()
    written = sorted(path for path, status in after.items() if before.get(path) != status)
    assert written == [], "a path setting the entry does not declare (Entry.paths)?"


@every_choice
async def test_a_choice_writes_the_files_it_declares_creating_their_folders(
    slot: Slot, name: str, settings: Settings
) -> None:
    files = {Path(getattr(settings, path)) for entry in chosen(settings) for path in entry.paths}
    assert not any(file.parent.exists() for file in files)

    await _serve(settings, slot.name, name)

    assert sorted(str(file) for file in files if not file.exists()) == []


@every_choice
async def test_readyz_checks_what_the_choices_declare_and_each_answers(
    slot: Slot, name: str, settings: Settings
) -> None:

    served = await _serve(settings, slot.name, name)

    assert served.ready == {check: True for entry in chosen(settings) for check in entry.ready}


def _descriptors() -> dict[int, str]:
    """This process's open file descriptors (sockets included) and what each is open on."""
    found = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            found[int(fd)] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the listing's own, closed by now
            continue
    return found


def _tasks() -> set[asyncio.Task[Any]]:
    return {task for task in asyncio.all_tasks() if not task.done()}


def _threads() -> set[threading.Thread]:
    """This process's running threads, but the event loop's default executor's (``asyncio_N``:
    the loop's own, for ``run_in_executor(None, …)`` and name lookups, closed with the loop)."""
    return {thread for thread in threading.enumerate() if not thread.name.startswith("asyncio_")}


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts descriptors in /proc")
@every_choice
async def test_closing_a_choice_leaves_no_descriptor_socket_task_or_thread_it_opened(
    slot: Slot, name: str, settings: Settings
) -> None:
    descriptors, tasks, threads = _descriptors(), _tasks(), _threads()

    _served = await _serve(settings, slot.name, name)  # kept alive: the collector closes nothing it holds

    left: tuple[dict[int, str], list[str], list[str]] = ({}, [], [])
    for _ in range(100):  # bounded: the double's end of a closed connection closes a moment later
        opened = {fd: what for fd, what in _descriptors().items() if descriptors.get(fd) != what}
        left = (
            opened,
            sorted(task.get_name() for task in _tasks() - tasks),
            sorted(thread.name for thread in _threads() - threads),  # a thread ending a moment later
        )
        if left == ({}, [], []):
            break
        await asyncio.sleep(0.01)
    assert left == ({}, [], [])


@pytest.mark.parametrize("server", SLOTS["server"].names())
def test_every_registered_server_opens_and_closes_the_api_in_its_application(
    server: str, environ: dict[str, str]
) -> None:
    settings = resolve(environ, {"server": server, "video_client": "fake", "store": "dict"})
    noted: list[str] = []

    @asynccontextmanager
    async def open_and_note() -> AsyncIterator[HttpApi]:
        async with open_http_api(settings, io.BytesIO()) as api:
            noted.append("opened")
            yield api
        noted.append("closed")

    picked = server_named(server)
    app = picked.app(open_and_note, settings)
    loop = asyncio.new_event_loop()
    try:
        with picked.lifespan(app, loop):  # as its server opens and closes it (``Server.lifespan``)
            during = list(noted)
    finally:
        loop.close()

    assert (during, noted) == (["opened"], ["opened", "closed"])
