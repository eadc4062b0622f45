"""The browser driver on every backend (local, Modal and Daytona through their faithful fakes):
the same script signs in, keeps its cookie across hibernation, and shares nothing between users."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from core.browser.sandboxed import WarmBrowser, command_for, drive
from core.browser.session import answer_of
from core.config import Settings
from iris_testing.browser import chromium_path
from iris_testing.browser_site import BrowserSite
from tests.sandboxes.conftest import Backend
from tests.sandboxes.fakes import FakeModal

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.process,
    pytest.mark.browser,
    pytest.mark.skipif(chromium_path() is None, reason="no Chromium executable"),
]


@pytest.fixture
def site():
    site = BrowserSite()
    with site.served() as s:
        yield site, s


async def act(box, settings, action, **args):
    return answer_of(await drive(box, command_for(settings, action, args)))


async def test_the_same_driver_signs_in_and_keeps_the_cookie_across_hibernation(
    backend: Backend, site, tmp_path
) -> None:
    _, s = site
    settings = Settings(home=tmp_path, web_allow_hosts=[f"127.0.0.1:{s.port}"])
    alice = backend.make("alice")
    page = await act(alice, settings, "navigate", url=f"{s.url}/signin")
    assert page["ok"] and '[e2] password "Password"' in page["lines"], page
    await act(alice, settings, "type", ref="e1", text="alice")
    await act(alice, settings, "type", ref="e2", text="hunter2", allow_password=True)
    signed = await act(alice, settings, "click", ref="e3")
    assert "text: Signed in as alice" in signed["lines"], signed

    await alice.hibernate()
    await alice.resume()
    again = await act(backend.make("alice"), settings, "navigate", url=f"{s.url}/account")
    assert "text: Signed in as alice" in again["lines"], again

    bob = await act(backend.make("bob"), settings, "navigate", url=f"{s.url}/account")
    assert "text: Not signed in" in bob["lines"], bob
    refused = await act(alice, settings, "navigate", url="http://169.254.169.254/latest/")
    assert not refused["ok"] and "not a public address" in refused["error"]
    if backend.name == "modal":
        assert isinstance(backend.fake, FakeModal)
        images = backend.fake.recorder.named("Image.apt_install")
        assert images and all("chromium" in image.args for image in images)


async def test_the_turns_browser_keeps_its_page_between_actions_on_every_backend(
    backend: Backend, site, tmp_path
) -> None:
    """The server (``driver.py --serve``) runs as a sandbox command of its own beside each
    action's ``--ask``: on Modal and Daytona too. What a click loaded is there for the next
    action, one Chromium served all three, and the turn's end stops it and its socket."""
    _, s = site
    settings = Settings(home=tmp_path, web_allow_hosts=[f"127.0.0.1:{s.port}"])
    box = backend.make("alice")

    @asynccontextmanager
    async def use() -> AsyncIterator[object]:
        yield box

    warm = WarmBrowser(settings, use)  # type: ignore[arg-type]

    async def act(action, **args):
        return answer_of(await warm.act(box, command_for(settings, action, args), None))

    first = await act("navigate", url=f"{s.url}/more")
    await act("click", ref="e1")
    snapshot = await act("snapshot")
    assert "text: Notice 1: dredging at berth 4" in snapshot["lines"], snapshot
    assert '[e2] link "Notice 3: fog signal testing" -> /notice/3' in snapshot["lines"]
    assert (first["warm"], snapshot["warm"], warm.starts) == (False, True, 1)
    assert warm.running
    await warm.aclose()
    assert not warm.running
    listing = await box.exec("ls -a .iris/browser")
    assert "profile" in listing.stdout and "ctl.sock" not in listing.stdout, listing
