"""A real headless Chromium for the tests that look at pages as people do (``/docs``, the chart).

Chromium is Debian's (``scripts/browser-up.sh`` installs it); it is driven over the Chrome
DevTools Protocol on a websocket with aiohttp's client (no Playwright or Selenium: both
download browser builds from CDNs). Every off-machine request a page might make goes to a
dead proxy and would show up as a failed load.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import struct
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from tests.support import stop

WIDTH, HEIGHT = 1280, 900
#: Bounds: the browser's start, one DevTools command.
START_TIMEOUT_S = 20.0
COMMAND_TIMEOUT_S = 10.0


def chromium() -> str:
    """The browser; without it a loud failure under CI=true (a skipped test checks nothing), else a skip."""
    path = shutil.which("chromium")
    if path is not None:
        return path
    message = "chromium is not on PATH: run scripts/browser-up.sh"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


@contextlib.contextmanager
def running_chromium(executable: str) -> Iterator[str]:
    """Headless Chromium with a throwaway profile; yields its DevTools websocket URL.

    The browser leads its own process group: it is stopped by its PID (SIGTERM, then
    SIGKILL) and any helper process left in that group is killed with it.
    """
    with tempfile.TemporaryDirectory(prefix="docs-browser-", ignore_cleanup_errors=True) as tmp:
        profile, log_path = Path(tmp) / "profile", Path(tmp) / "chromium.log"
        argv = [
            executable,
            "--headless=new",
            *(["--no-sandbox"] if os.geteuid() == 0 else []),
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            f"--user-data-dir={profile}",
            f"--window-size={WIDTH},{HEIGHT}",
            # Nothing leaves the machine: the page's requests elsewhere hit a dead proxy
            # (loopback bypasses proxies), and the browser's own background traffic is off.
            "--proxy-server=http://127.0.0.1:9",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-default-apps",
            "--disable-domain-reliability",
            "--disable-sync",
            "--disable-extensions",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--no-pings",
            "--hide-scrollbars",
            "--mute-audio",
            "about:blank",
        ]
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        try:
            yield _devtools_url(profile, process, log_path)
        finally:
            stop(process)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)  # the group it leads: renderer, GPU, zygote


def _devtools_url(profile: Path, process: subprocess.Popen[bytes], log_path: Path) -> str:
    """Chromium writes the port it chose, and the browser target's path, to DevToolsActivePort."""
    active = profile / "DevToolsActivePort"
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        lines = active.read_text().split("\n") if active.exists() else []
        if len(lines) >= 2 and lines[0].isdigit() and lines[1].startswith("/devtools/"):
            return f"ws://127.0.0.1:{lines[0]}{lines[1]}"
        time.sleep(0.05)
    output = log_path.read_text(errors="replace")[-3000:]
    raise RuntimeError(
        f"chromium gave no DevTools port within {START_TIMEOUT_S}s (exit {process.poll()}):\n{output}"
    )


class DevToolsError(Exception):
    """A DevTools command answered with an error."""


class DevTools:
    """A minimal Chrome DevTools Protocol client: commands matched by id, events kept in order."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self._ws = ws
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.events: list[dict[str, Any]] = []
        self._reader = asyncio.create_task(self._read())

    async def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[self._next_id] = answer
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        await self._ws.send_str(orjson.dumps(message).decode())
        async with asyncio.timeout(COMMAND_TIMEOUT_S):
            return await answer

    async def close(self) -> None:
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader

    async def _read(self) -> None:
        async for message in self._ws:
            if message.type != aiohttp.WSMsgType.TEXT:
                break
            data = orjson.loads(message.data)
            if "id" not in data:
                self.events.append(data)
                continue
            answer = self._pending.pop(data["id"], None)
            if answer is None or answer.done():
                continue
            if "error" in data:
                answer.set_exception(DevToolsError(f"{data['error']}"))
            else:
                answer.set_result(data.get("result", {}))
        for answer in self._pending.values():
            if not answer.done():
                answer.set_exception(DevToolsError("the DevTools connection closed"))


def png_size(png: bytes) -> tuple[int, int]:
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", png[16:24])
    return width, height


async def open_tab(
    devtools: DevTools, url: str, width: int, height: int, domains: tuple[str, ...] = ("Page",)
) -> tuple[str, str]:
    """A new tab of ``width`` × ``height`` showing ``url``, with ``domains`` enabled (their events
    land in ``devtools.events``); its target id and session."""
    target = await devtools.call("Target.createTarget", url="about:blank")
    attached = await devtools.call("Target.attachToTarget", targetId=target["targetId"], flatten=True)
    session: str = attached["sessionId"]
    for domain in domains:
        await devtools.call(f"{domain}.enable", session)
    await devtools.call(
        "Emulation.setDeviceMetricsOverride",
        session,
        width=width,
        height=height,
        deviceScaleFactor=1,
        mobile=False,
    )
    navigated = await devtools.call("Page.navigate", session, url=url)
    assert "errorText" not in navigated, navigated
    return str(target["targetId"]), session
