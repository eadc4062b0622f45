"""The emulator on loopback with a scripted model and a store on a ManualClock, and a real
headless Chromium. Browser tests skip (saying why) where Chromium or Playwright is missing,
unless IRIS_REQUIRE_BROWSER=1 (CI), where they fail instead."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
import openai
import pytest

from core.clock import ManualClock
from core.config import load_settings
from core.store import open_store
from functions.dispatch import LocalDispatcher
from functions.runtime import Runtime, compose
from iris_testing.browser import chromium_path, missing_browser
from iris_testing.llm_server import ScriptedLLM
from iris_testing.server import serve
from local_dev.emulator import Emulator, local_settings
from tests.fakes.stack import API_KEY, scripted_env

# Read at import: the autouse fixture clears IRIS_* before each test.
REQUIRE_BROWSER = os.environ.get("IRIS_REQUIRE_BROWSER") == "1"
SCREENSHOTS = os.environ.get("IRIS_SCREENSHOTS")
CHROMIUM = os.environ.get("IRIS_CHROMIUM")
START = datetime(2031, 3, 4, 9, 30, tzinfo=UTC)
LINK = re.compile(r"/ui/signin\?t=([A-Za-z0-9_-]+)")
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


@dataclass
class DashStack:
    url: str
    runtime: Runtime
    client: openai.OpenAI
    clock: ManualClock
    llm: ScriptedLLM

    def ask(self, text: str, user: str) -> str:
        answer = self.client.chat.completions.create(
            model="iris", messages=[{"role": "user", "content": text}], user=user)
        return answer.choices[0].message.content or ""

    def link_for(self, user: str) -> str:
        """Send /dashboard as ``user`` over the HTTP API; the sign-in address on this server."""
        reply = self.ask("/dashboard", user)
        found = LINK.search(reply)
        assert found, reply
        return f"{self.url}/ui/signin?t={found[1]}"

    def user_id(self, user: str) -> str:
        return self.runtime.store.users.resolve(f"http:{user}")


@pytest.fixture
def dash(monkeypatch) -> Iterator[DashStack]:
    llm = ScriptedLLM()
    clock = ManualClock(START)
    with serve(llm.app) as model:
        for name, value in scripted_env(model.url).items():
            monkeypatch.setenv(name, value)
        settings = local_settings(load_settings())
        store = open_store(settings, clock=clock)
        dispatcher = LocalDispatcher()
        emulator = Emulator(runtime=compose(settings, dispatcher=dispatcher, store=store),
                            dispatcher=dispatcher)
        with serve(emulator.app(tick_seconds=3600)) as iris:
            client = openai.OpenAI(base_url=f"{iris.url}/v1", api_key=API_KEY, max_retries=0,
                                   timeout=60)
            yield DashStack(url=iris.url, runtime=emulator.runtime, client=client, clock=clock,
                            llm=llm)
        store.close()


@pytest.fixture
def web(dash) -> Iterator[httpx.Client]:
    """A plain HTTP client (no cookies kept across tests) for the non-browser checks."""
    with httpx.Client(base_url=dash.url, timeout=30) as client:
        yield client


@pytest.fixture(scope="module")
def browser():
    """Per module: Playwright's sync API keeps an event loop running in the main thread while
    it is open, which would break later tests that call asyncio.run."""
    why = missing_browser(CHROMIUM)
    if why:
        if REQUIRE_BROWSER:
            pytest.fail(f"IRIS_REQUIRE_BROWSER=1 but {why}")
        pytest.skip(f"browser tests skipped: {why}")
    from playwright.sync_api import expect, sync_playwright

    # The first turn loads litellm on a shared machine: wait on conditions, generously.
    expect.set_options(timeout=60_000)
    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=chromium_path(CHROMIUM), headless=True)
        yield launched
        launched.close()


class Shots:
    """Screenshots at phone and desktop widths: into IRIS_SCREENSHOTS when set (how
    docs/screenshots/ is made), else into the test's temporary directory."""

    def __init__(self, where: Path) -> None:
        self.where = where
        where.mkdir(parents=True, exist_ok=True)

    def take(self, page, name: str) -> None:
        for label, size in (("phone", PHONE), ("desktop", DESKTOP)):
            page.set_viewport_size(size)
            path = self.where / f"{name}-{label}.png"
            page.screenshot(path=str(path), full_page=True)
            assert path.stat().st_size > 1000
        page.set_viewport_size(DESKTOP)


@pytest.fixture
def shots(tmp_path) -> Shots:
    return Shots(Path(SCREENSHOTS) if SCREENSHOTS else tmp_path / "screenshots")


@pytest.fixture
def new_page(browser):
    """A fresh browser profile (its own cookies) per call; dialogs (confirmations) accepted."""
    contexts = []

    def make():
        context = browser.new_context(viewport=DESKTOP)
        context.set_default_timeout(60_000)
        contexts.append(context)
        page = context.new_page()
        page.on("dialog", lambda dialog: dialog.accept())
        return page

    yield make
    for context in contexts:
        context.close()
