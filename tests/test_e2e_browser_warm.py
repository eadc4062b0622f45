"""One browser for a turn's actions, end to end (openai client → emulator → scripted model →
browser tools → Chromium in the user's local sandbox): the page stays open between actions, so
what its scripts drew after a click is still there for the next one, and the browser ends with
the turn."""

import pytest

from iris_testing.browser import chromium_path
from iris_testing.browser_site import BrowserSite
from iris_testing.llm_server import ScriptedLLM
from tests.test_e2e_browser import ask, browsers_running, stack_for, tool_results

pytestmark = [
    pytest.mark.browser,
    pytest.mark.process,
    pytest.mark.skipif(chromium_path() is None, reason="no Chromium executable"),
]


@pytest.fixture
def site():
    site = BrowserSite()
    with site.served() as s:
        yield site, s


def test_what_a_click_loaded_is_still_there_for_the_next_actions(site, monkeypatch, iris_home):
    """"Load more" adds items with a script and hides itself. A browser that reopened the page
    for each action (as one started per action must) would show only the first item to the
    snapshot, and would have loaded /more three times. The click on e1 after that snapshot
    must reach the link the snapshot calls e1, not the hidden button an earlier snapshot
    called e1."""
    site, s = site
    llm = ScriptedLLM()
    (
        llm.tool_call("browser_navigate", {"url": f"{s.url}/more"})
        .tool_call("browser_click", {"ref": "e1"})
        .tool_call("browser_snapshot", {})
        .tool_call("browser_click", {"ref": "e1"})
        .reply("Read notice 2.")
    )
    with stack_for(llm, monkeypatch, s) as stack:
        assert ask(stack.client, "What are the harbour notices?") == "Read notice 2."
        first, loaded, snapshot, notice = tool_results(llm)
        assert '[e1] button "Load more"' in first and "Notice 2" not in first
        assert "Notice 3: fog signal testing" in loaded
        assert '[e1] link "Notice 2: pilot boarding moved" -> /notice/2' in snapshot, snapshot
        assert "text: Notice 1: dredging at berth 4" in snapshot
        assert "Load more" not in snapshot
        assert "The full text of notice 2." in notice, notice
        assert [p for p, _ in site.hits if p == "/more"] == ["/more"]
        assert [p for p, _ in site.hits if p == "/more.json"] == ["/more.json"]
        assert browsers_running(iris_home) == []  # it ended with the turn

        # The next turn's browser is a new one, on the page the last turn left open
        llm.tool_call("browser_snapshot", {}).reply("Still there.")
        assert ask(stack.client, "and now?") == "Still there."
        assert "The full text of notice 2." in tool_results(llm)[-1]
        assert browsers_running(iris_home) == []
