"""The history chart as a person sees it: a real headless Chromium opens
``/collections/{id}/history.svg`` of a service taking snapshots every second, and both the
drawing (the SVG's series, as the browser lays them out) and the screenshot (their colours'
pixels) show the series.
"""

from __future__ import annotations

import asyncio
import base64
import io
from pathlib import Path

import aiohttp
import httpx
import orjson
from PIL import Image

from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from tests.browser import COMMAND_TIMEOUT_S, DevTools, chromium, open_tab, png_size, running_chromium
from tests.support import running_service, wait_for

WIDTH, HEIGHT = 960, 420
COLOURS = {"impressions": (0x25, 0x63, 0xEB), "engagements": (0x16, 0xA3, 0x4A)}
#: Each series as the browser laid it out: its points and the width of its bounding box.
_SERIES = """JSON.stringify(Array.from(document.querySelectorAll("polyline.series")).map(line => ({
  name: line.classList[1], points: line.points.numberOfItems, width: line.getBBox().width,
})))"""


async def look(devtools_url: str, url: str) -> tuple[list[dict[str, object]], bytes]:
    timeout = aiohttp.ClientTimeout(total=None, connect=COMMAND_TIMEOUT_S)
    async with aiohttp.ClientSession(timeout=timeout) as http, http.ws_connect(devtools_url) as ws:
        devtools = DevTools(ws)
        try:
            target, session = await open_tab(devtools, url, WIDTH, HEIGHT)
            series: list[dict[str, object]] = []
            for _ in range(50):  # bounded: the document is one response, laid out at once
                shown = await devtools.call("Runtime.evaluate", session, expression=_SERIES)
                series = orjson.loads(shown["result"].get("value") or "[]")
                if series:
                    break
                await asyncio.sleep(0.1)
            shot = await devtools.call("Page.captureScreenshot", session, format="png")
            await devtools.call("Target.closeTarget", targetId=target)
            return series, base64.b64decode(shot["data"])
        finally:
            await devtools.close()


def test_the_chart_draws_both_series_in_a_real_browser(tmp_path: Path) -> None:
    browser = chromium()
    env = {"INFLUENCER_STATS_SNAPSHOT_INTERVAL": "1"}
    videos = [synthetic_video_id(n) for n in range(3)]
    with running_service([], tmp_path / "service.log", env=env) as service, httpx.Client(timeout=10) as http:
        http.put(f"{service.url}/collections/charted", json={"videos": videos})
        history = f"{service.url}/collections/charted/history"
        assert wait_for(lambda: len(http.get(history).json()["points"]) >= 3, timeout=15)
        svg = http.get(f"{history}.svg")
        with running_chromium(browser) as devtools_url:
            series, screenshot = asyncio.run(look(devtools_url, f"{history}.svg"))

    assert svg.status_code == 200 and svg.headers["content-type"] == "image/svg+xml"
    assert sorted(str(s["name"]) for s in series) == ["engagements", "impressions"]
    for drawn in series:
        assert int(str(drawn["points"])) >= 3 and float(str(drawn["width"])) > 100, drawn
    assert png_size(screenshot) == (WIDTH, HEIGHT)
    rgb = Image.open(io.BytesIO(screenshot)).convert("RGB").tobytes()
    for name, (r, g, b) in COLOURS.items():
        near = sum(
            1
            for i in range(0, len(rgb), 3)
            if abs(rgb[i] - r) + abs(rgb[i + 1] - g) + abs(rgb[i + 2] - b) < 60
        )
        assert near > 300, f"{name}: {near} pixels of its colour"
