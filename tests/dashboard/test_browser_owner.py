"""The owner's system pages in a real headless Chromium: held commands approved (run once in
their chat, as if the user had sent /approve N) and denied; the platforms with their webhook
state and Telegram's own getWebhookInfo (against the fake Bot API); iris doctor's checks. A
user who is not an owner gets 403 on each."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import expect
else:
    try:
        from playwright.sync_api import expect
    except ImportError:  # the `browser` fixture skips, or fails under IRIS_REQUIRE_BROWSER=1
        expect = None

from core.dashboard.signin import issue_link
from iris_testing.server import serve
from iris_testing.telegram_api import FakeTelegram
from iris_testing.waiting import wait_until
from tests.dashboard.conftest import START
from tests.dashboard.test_browser import sign_in

TOKEN = "123456:" + "A" * 35


@pytest.fixture
def telegram(monkeypatch, request):
    """Telegram configured against the fake Bot API, then the dashboard stack."""
    fake = FakeTelegram(token=TOKEN)
    with serve(fake.app) as api:
        monkeypatch.setenv("IRIS_TELEGRAM_TOKEN", TOKEN)
        monkeypatch.setenv("IRIS_TELEGRAM_SECRET", "s3cret-webhook")
        monkeypatch.setenv("IRIS_TELEGRAM_API_BASE", api.url)
        yield fake, request.getfixturevalue("dash")


def owner_page(dash, new_page, user: str = "carol"):
    dash.ask("/help", user)
    link = issue_link(dash.runtime.store, dash.user_id(user), is_owner=True,
                      issued_by="cli:operator", base_url=dash.url)
    page = new_page()
    sign_in(page, link.url)
    return page


def until(condition, what: str):
    return wait_until(condition, what)


def hold(dash, user: str, command: str):
    user_id = dash.user_id(user)
    session = dash.runtime.store.sessions.latest(user_id, f"http:{user}")
    return dash.runtime.store.held.hold(
        user_id, chat_key=f"http:{user}", session_id=session.id if session else None,
        command=command, workdir=None, timeout=30, reason="it deletes files", ttl=3600,
        requested_by=f"http:{user}")


def test_the_owner_approves_and_denies_held_commands(dash, new_page, shots):
    dash.llm.reply("Hello Alice.")
    assert dash.ask("hello", "alice") == "Hello Alice."
    alice = dash.user_id("alice")
    denied = hold(dash, "alice", "rm -rf build")
    approved = hold(dash, "alice", "echo approved-from-the-dashboard")
    page = owner_page(dash, new_page)
    page.get_by_role("link", name="Held").click()
    expect(page.locator("[data-held]")).to_have_count(2)
    shots.take(page, "owner-held")

    page.get_by_role("button", name=f"Deny #{denied.number}").click()
    expect(page.get_by_role("status")).to_contain_text(f"Denied held command #{denied.number}")
    assert dash.runtime.store.held.get(alice, denied.number).status == "denied"

    dash.llm.reply("The command printed approved-from-the-dashboard.")
    page.get_by_role("button", name=f"Approve #{approved.number}").click()
    expect(page.get_by_role("status")).to_contain_text(f"Approved held command "
                                                       f"#{approved.number}")
    done = until(lambda: (h := dash.runtime.store.held.get(alice, approved.number)).status
                 == "done" and h, "the approved command to run")
    assert done.exit_code == 0 and "approved-from-the-dashboard" in done.output
    # the model was told the result in alice's chat, and answered there
    # (the held row is done before the turn that reports it asks the model: wait for that request)
    tool_turn = wait_until(
        lambda: next((r["messages"] for r in reversed(dash.llm.requests)
                      if "approved-from-the-dashboard" in str(r["messages"][-1].get("content"))),
                     None),
        "the model to be told the approved command's result",
        seen=lambda: dash.llm.requests[-1]["messages"][-1] if dash.llm.requests else None)
    assert "approved-from-the-dashboard" in tool_turn[-1]["content"]
    # the page answered the press while the command still ran (it showed the row as approved);
    # once it is done, a fresh page holds nothing
    page.reload()
    expect(page.locator("[data-held]")).to_have_count(0)
    expect(page.get_by_text("Nothing is held.")).to_be_visible()
    # a second approval of the same command changes nothing
    assert dash.runtime.store.held.get(alice, approved.number).status == "done"


def test_platforms_show_webhook_state_and_telegrams_view(telegram, new_page, shots):
    fake, dash = telegram
    fake.webhook_failed("Wrong response from the webhook: 502 Bad Gateway",
                        at=int(START.timestamp()))
    page = owner_page(dash, new_page)
    page.get_by_role("link", name="Platforms").click()
    row = page.locator("[data-platform='telegram']")
    expect(row.locator("[data-configured]")).to_have_text("yes")
    expect(row.locator("[data-last]")).to_have_text("–")
    expect(page.locator("[data-platform='slack'] [data-configured]")).to_have_text("no")
    card = page.locator("[data-telegram]")
    expect(card.locator("[data-error]")).to_contain_text("502 Bad Gateway (2031-03-04 09:30 UTC)")
    expect(card.locator("[data-url]")).to_contain_text("none set")
    assert fake.methods_called() == ["getWebhookInfo"]
    shots.take(page, "owner-platforms")


def test_doctor_checks_are_rendered(dash, new_page, shots):
    page = owner_page(dash, new_page)
    page.get_by_role("link", name="Doctor").click()
    expect(page.locator("[data-check='database']")).to_have_attribute("data-level", "ok")
    expect(page.locator("[data-check='api key']")).to_have_attribute("data-level", "ok")
    expect(page.locator("[data-check='model']")).to_contain_text("openai/scripted-model")
    expect(page.locator("[data-summary]")).to_have_text(re.compile(r"\d+ error\(s\), \d+ "
                                                                   r"warning\(s\)\."))
    shots.take(page, "owner-doctor")


def test_the_new_owner_pages_are_403_for_a_user(dash, new_page):
    page = new_page()
    sign_in(page, dash.link_for("bob"))
    for where in ("platforms", "doctor"):
        assert page.goto(f"{dash.url}/ui/owner/{where}").status == 403, where
