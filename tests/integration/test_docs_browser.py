"""``/docs`` as a person sees it: each real server, a real headless Chromium, no network but loopback.

Chromium is Debian's (``scripts/browser-up.sh`` installs it); the test drives it over
the Chrome DevTools Protocol on a websocket with aiohttp's client (no Playwright or
Selenium: both download browser builds from CDNs). Every off-machine request the
page might make goes to a dead proxy and would show up as a failed load. With
``UPDATE_SCREENSHOT=1`` the first server's render is written to ``docs/api-docs.png``.
"""

from __future__ import annotations

import asyncio
import base64
import os
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import httpx
import orjson
import pytest

from influencer_stats.http.docs import ASSETS
from tests.browser import (
    COMMAND_TIMEOUT_S,
    HEIGHT,
    WIDTH,
    DevTools,
    chromium,
    open_tab,
    png_size,
    running_chromium,
)
from tests.raw_http import raw_request, request_bytes
from tests.support import ROOT, SERVERS, RunningService

SCREENSHOT = ROOT / "docs" / "api-docs.png"
#: Bound: the page showing every operation.
RENDER_TIMEOUT_S = 20.0

#: Each operation Swagger UI shows: its method, path and operationId (deep links give each
#: operation's block the id ``operations-<tag>-<operationId>``).
_OPERATIONS_ON_PAGE = """JSON.stringify(Array.from(document.querySelectorAll(".opblock")).map(block => ({
  method: (block.querySelector(".opblock-summary-method") || {}).textContent || "",
  path: (block.querySelector(".opblock-summary-path") || {dataset: {}}).dataset.path || "",
  operationId: block.id.replace(/^operations-[^-]+-/, ""),
})))"""
#: "Try it out" on GET /healthz, then "Execute": the status the page shows (bounded waits).
_TRY_HEALTH = """(async () => {
  const until = async (find) => {
    for (const end = Date.now() + 5000; Date.now() < end; await new Promise(r => setTimeout(r, 50))) {
      const found = find();
      if (found) return found;
    }
    throw new Error("Swagger UI did not show what the test waits for");
  };
  const block = document.getElementById("operations-operations-getHealth");
  block.querySelector(".opblock-summary-control").click();
  (await until(() => block.querySelector(".try-out__btn"))).click();
  (await until(() => block.querySelector(".execute"))).click();
  const status = await until(() => block.querySelector(".live-responses-table tbody .response-col_status"));
  const url = block.querySelector(".request-url pre");
  return JSON.stringify({status: status.textContent.trim(), url: url ? url.textContent : ""});
})()"""
_ERRORS_ON_PAGE = """Array.from(document.querySelectorAll(".errors-wrapper, .loading-container .errors"))
  .map(e => e.textContent).join(" | ")"""


@dataclass
class Render:
    """What the browser showed and reported while loading the page."""

    operations: list[dict[str, str]]
    page_errors: str
    screenshot: bytes
    #: What "Try it out" on GET /healthz showed: the status and the URL it called.
    tried: dict[str, str]
    events: list[dict[str, Any]] = field(repr=False)

    def problems(self) -> list[str]:
        """Failed loads, HTTP errors, uncaught exceptions, console and log errors."""
        urls = {
            e["params"]["requestId"]: e["params"]["request"]["url"]
            for e in self.events
            if e["method"] == "Network.requestWillBeSent"
        }
        found = []
        for event in self.events:
            method, params = event["method"], event.get("params", {})
            if method == "Network.loadingFailed":
                found.append(f"load failed: {urls.get(params['requestId'])} {params.get('errorText')}")
            elif method == "Network.responseReceived" and params["response"]["status"] >= 400:
                found.append(f"HTTP {params['response']['status']}: {params['response']['url']}")
            elif method == "Runtime.exceptionThrown":
                details = params["exceptionDetails"]
                found.append(
                    f"exception: {details.get('exception', {}).get('description') or details['text']}"
                )
            elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
                found.append(f"console.{params['type']}: {[a.get('value') for a in params['args']]}")
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                found.append(f"log error: {params['entry']['text']} ({params['entry'].get('url')})")
        return found


async def render(devtools_url: str, page_url: str, expected: int) -> Render:
    """Open ``page_url`` in a new tab, wait (bounded) until it shows ``expected`` operations, try one."""
    timeout = aiohttp.ClientTimeout(total=None, connect=COMMAND_TIMEOUT_S)
    async with (
        aiohttp.ClientSession(timeout=timeout) as http,
        http.ws_connect(devtools_url, max_msg_size=64 * 1024 * 1024) as ws,
    ):
        devtools = DevTools(ws)
        try:
            target, session = await open_tab(
                devtools, page_url, WIDTH, HEIGHT, ("Network", "Runtime", "Log", "Page")
            )
            operations: list[dict[str, str]] = []
            deadline = time.monotonic() + RENDER_TIMEOUT_S
            while time.monotonic() < deadline:
                shown = await devtools.call("Runtime.evaluate", session, expression=_OPERATIONS_ON_PAGE)
                operations = orjson.loads(shown["result"]["value"])
                if len(operations) >= expected:
                    break
                await asyncio.sleep(0.2)
            await devtools.call(
                "Runtime.evaluate", session, expression="document.fonts.ready", awaitPromise=True
            )
            await asyncio.sleep(0.5)  # late events (a failed load, a console error) arrive too
            errors = await devtools.call("Runtime.evaluate", session, expression=_ERRORS_ON_PAGE)
            shot = await devtools.call("Page.captureScreenshot", session, format="png")
            tried = await devtools.call(
                "Runtime.evaluate", session, expression=_TRY_HEALTH, awaitPromise=True, returnByValue=True
            )
            assert "exceptionDetails" not in tried, tried["exceptionDetails"]
            await asyncio.sleep(0.2)  # the events of that call
            await devtools.call("Target.closeTarget", targetId=target)
            return Render(
                operations,
                errors["result"]["value"],
                base64.b64decode(shot["data"]),
                orjson.loads(tried["result"]["value"]),
                devtools.events,
            )
        finally:
            await devtools.close()


def test_the_docs_page_lists_every_operation_in_a_real_browser_without_an_error(
    service: RunningService, request: pytest.FixtureRequest
) -> None:
    browser = chromium()
    spec = httpx.get(f"{service.url}/openapi.json", timeout=10).json()
    expected = sorted(
        (method.upper(), path, operation["operationId"])
        for path, item in spec["paths"].items()
        for method, operation in item.items()
        if method != "parameters"
    )

    with running_chromium(browser) as devtools_url:
        shown = asyncio.run(render(devtools_url, f"{service.url}/docs", len(expected)))

    assert shown.problems() == []
    assert shown.page_errors == ""
    assert sorted((o["method"].upper(), o["path"], o["operationId"]) for o in shown.operations) == expected
    assert png_size(shown.screenshot) == (WIDTH, HEIGHT)
    assert shown.tried == {"status": "200", "url": f"{service.url}/healthz"}  # same origin, servers "/"
    if os.environ.get("UPDATE_SCREENSHOT") == "1" and request.node.callspec.params["service"] == SERVERS[0]:
        SCREENSHOT.parent.mkdir(exist_ok=True)
        SCREENSHOT.write_bytes(shown.screenshot)


# --- the same answers from every server (no browser) ----------------------------------------------

_TRAVERSALS = [
    b"/docs/assets/..%2fpyproject.toml",
    b"/docs/assets/..%2Fpyproject.toml",
    b"/docs/assets/../pyproject.toml",
    b"/docs/assets/%2e%2e/%2e%2e/pyproject.toml",
    b"/docs/assets/swagger-ui.css/../../../pyproject.toml",
    b"/docs/assets/..%5cpyproject.toml",
    b"/docs/assets/index.html",
    b"/docs/assets/",
    b"/docs/",
]


def test_every_server_serves_the_page_and_the_allow_listed_assets_and_nothing_else(
    service: RunningService,
) -> None:
    page = httpx.get(f"{service.url}/docs", timeout=10)
    head = raw_request(service.url, request_bytes(b"HEAD", b"/docs"))
    post = raw_request(service.url, request_bytes(b"POST", b"/docs", body=b"{}"))

    assert (page.status_code, page.headers["content-type"]) == (200, "text/html; charset=utf-8")
    assert (head.status, head.headers["content-type"], head.body) == (200, "text/html; charset=utf-8", b"")
    assert (post.status, post.headers["allow"]) == (405, "GET, HEAD")
    for name, asset in ASSETS.items():
        answer = httpx.get(f"{service.url}/docs/assets/{name}?v=0", timeout=10)
        assert (answer.status_code, answer.headers["content-type"]) == (200, asset.content_type), name
        assert answer.headers["cache-control"] == "public, max-age=31536000, immutable"
    for target in _TRAVERSALS:
        refused = raw_request(service.url, request_bytes(b"GET", target))
        assert (refused.status, refused.headers["content-type"]) == (404, "application/problem+json"), target
        assert b"build-system" not in refused.body
