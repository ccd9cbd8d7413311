"""Fixtures shared by the unit test modules split by concern (the HTTP edge, the YouTube double)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
import pytest_asyncio

from tests.unit.http_api_support import Service, service
from tests.unit.youtube_double_support import BOUND
from youtube_double import RunningDouble, running_double


@pytest.fixture
def svc() -> Service:
    return service()


@pytest_asyncio.fixture
async def yt() -> AsyncIterator[RunningDouble]:
    async with running_double() as double:
        yield double


@pytest_asyncio.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=BOUND)) as s:
        yield s
