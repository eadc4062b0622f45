"""The chat page shows the answer as the model produces it: the scripted model server holds its
chunks behind a gate, and the browser shows the first words while the rest are held back."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import expect
else:
    try:
        from playwright.sync_api import expect
    except ImportError:  # the `browser` fixture skips, or fails under IRIS_REQUIRE_BROWSER=1
        expect = None

from iris_testing.llm_server import Gate
from tests.dashboard.test_browser import script_ready, sign_in


def test_the_answer_grows_in_the_page_as_it_is_produced(dash, new_page, shots):
    page = new_page()
    sign_in(page, dash.link_for("alice"))
    gate = Gate()
    dash.llm.reply("Green tea wants two minutes at eighty degrees.", gate=gate)
    gate.allow(3)  # the role chunk, "Green ", "tea "
    script_ready(page)
    page.get_by_label("Message (Ctrl+Enter sends)").fill("how long for green tea?")
    page.get_by_role("button", name="Send").click()
    answer = page.locator(".bubble.assistant").last
    expect(answer).to_have_text(re.compile(r"^Green tea\s*$"))
    expect(answer).to_have_attribute("data-state", "streaming")
    assert gate.sent == 3
    shots.take(page, "chat-streaming")
    gate.allow(2)
    expect(answer).to_have_text(re.compile(r"^Green tea wants two\s*$"))
    gate.open()
    expect(answer).to_have_text("Green tea wants two minutes at eighty degrees.")
    expect(answer).to_have_attribute("data-state", "done")
    assert dash.llm.requests[-1]["stream"] is True


def test_a_session_a_chat_starts_appears_in_the_sidebar_without_a_reload(dash, new_page):
    page = new_page()
    sign_in(page, dash.link_for("alice"))  # /dashboard itself ran in the HTTP API's chat
    script_ready(page)
    listed = page.locator("ul.sessions li a")
    expect(listed).to_have_count(1)
    expect(listed.first).to_contain_text("http")
    dash.llm.reply("Hello Alice.")
    page.get_by_label("Message (Ctrl+Enter sends)").fill("hello there")
    page.get_by_role("button", name="Send").click()
    expect(page.locator(".bubble.assistant").last).to_have_attribute("data-state", "done")
    expect(listed).to_have_count(2)
    expect(listed.first).to_contain_text("dashboard")
