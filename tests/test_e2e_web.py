"""End to end over real HTTP: the openai client → the emulator → litellm → a scripted model that
searches a fake SearXNG and reads a page served on loopback (refused until it is allowed)."""

import pytest

from iris_testing.llm_server import ScriptedLLM
from iris_testing.server import serve
from iris_testing.web_fakes import FakeSearch, FakeSite
from tests.fakes.stack import emulator_stack


@pytest.fixture
def llm():
    return ScriptedLLM()


@pytest.fixture
def web():
    site, search = FakeSite(), FakeSearch()
    with serve(site.app) as s, serve(search.app) as q:
        yield site, s, search, q


def ask(client, text, user="alice"):
    answer = client.chat.completions.create(
        model="iris", messages=[{"role": "user", "content": text}], user=user
    )
    return answer.choices[0].message.content


def tool_results(llm):
    return [m["content"] for m in llm.requests[-1]["messages"] if m["role"] == "tool"]


def test_search_then_read_a_loopback_page_refused_then_allowed(llm, web, monkeypatch):
    site, s, search, q = web
    page = f"{s.url}/article"
    with emulator_stack(llm, monkeypatch, IRIS_WEB_SEARCH_PROVIDER="searxng",
                        IRIS_WEB_SEARCH_URL=q.url) as stack:
        client, rt = stack.client, stack.runtime
        (llm.tool_call("web_search", {"query": "north sea tides"})
         .tool_call("web_extract", {"urls": [page]})
         .tool_call("memory", {"action": "add", "target": "memory",
                               "content": "The user likes tide tables."})
         .reply("I could not read that page."))
        assert ask(client, "Find and read about North Sea tides.") == (
            "I could not read that page.")
        names = {t["function"]["name"] for t in llm.requests[0]["tools"]}
        assert {"web_search", "web_extract"} <= names
        found, refused, memory = tool_results(llm)
        assert found.startswith('<untrusted source="web_search">')
        assert "1. Tide tables for the Wash\n   https://tides.example/wash" in found
        assert search.requests[-1]["params"] == {"q": "north sea tides", "format": "json"}
        assert "Refused: 127.0.0.1 is a loopback address" in refused
        assert not site.hits
        assert "held as #1" in memory  # the turn read the web: the write waits for the user

        rt.settings = rt.settings.model_copy(
            update={"web_allow_hosts": [f"127.0.0.1:{s.port}"]})
        llm.tool_call("web_extract", {"urls": [page]}).reply("The Wash has 7 m tides.")
        assert ask(client, "Try reading it again.") == "The Wash has 7 m tides."
        (read,) = tool_results(llm)[-1:]
        assert read.startswith('<untrusted source="web_extract">')
        assert "Around the Wash the range reaches seven metres" in read
        assert "SCRIPT-NOT-TEXT" not in read and "NAV-LINK-NOT-TEXT" not in read
        assert site.hits == [("/article", f"127.0.0.1:{s.port}")]


def test_web_search_is_not_offered_without_a_provider(llm, monkeypatch):
    with emulator_stack(llm, monkeypatch) as stack:
        llm.reply("Hello.")
        assert ask(stack.client, "Hi") == "Hello."
    names = {t["function"]["name"] for t in llm.requests[0]["tools"]}
    assert "web_search" not in names and "web_extract" in names


def test_a_catalogue_tool_loads_for_the_rest_of_the_session(llm, monkeypatch):
    with emulator_stack(llm, monkeypatch) as stack:
        client = stack.client
        llm.tool_call("load_tools", {"names": ["cronjob"]}).reply("Loaded.")
        assert ask(client, "I will want reminders.") == "Loaded."
        first, after_load = (llm.requests[0]["tools"], llm.requests[1]["tools"])
        assert "cronjob" not in {t["function"]["name"] for t in first}
        assert after_load[: len(first)] == first  # appended: the earlier prefix is unchanged
        assert after_load[-1]["function"]["name"] == "cronjob"
        assert tool_results(llm) == ["Loaded cronjob: call it directly from now on."]

        llm.reply("Still here.")
        assert ask(client, "Next turn, same session.") == "Still here."
        assert llm.requests[-1]["tools"] == after_load  # the same list, byte for byte
        assert llm.requests[-1]["messages"][0] == llm.requests[1]["messages"][0]

        assert ask(client, "/new") == "Started a new session."
        llm.reply("Fresh.")
        assert ask(client, "Hello again.") == "Fresh."
        assert llm.requests[-1]["tools"] == first


def test_todo_is_shown_by_status(llm, monkeypatch):
    with emulator_stack(llm, monkeypatch) as stack:
        llm.tool_call("todo", {"todos": [{"id": "1", "content": "Read the tide tables",
                                          "status": "in_progress"}]}).reply("Planned.")
        assert ask(stack.client, "Plan the tide research.") == "Planned."
        status = ask(stack.client, "/status")
        assert "Tools loaded for this session: todo." in status
        assert status.endswith("Tasks (0/1 done):\n[~] 1. Read the tide tables")


def test_one_invalid_redirect_fails_only_its_own_url(llm, web, monkeypatch):
    """A ``Location: http:\\\\…`` makes httpx raise ``InvalidURL`` (not an ``HTTPError``) while
    it reads the redirect: that URL gets its error, the batch's other pages their text."""
    _, s, _, _ = web
    bad = f"{s.url}/redirect?to=http:%5C%5Cevil.example%5Cx"
    broken = f"{s.url}/redirect?to=http://%5Bzz%5D/"
    with emulator_stack(llm, monkeypatch, IRIS_WEB_ALLOW_HOSTS=f"127.0.0.1:{s.port}") as stack:
        (llm.tool_call("web_extract", {"urls": [bad, f"{s.url}/article", broken,
                                                f"{s.url}/notes.txt"]})
         .reply("Read what could be read."))
        assert ask(stack.client, "Read these four.") == "Read what could be read."
    (result,) = tool_results(llm)
    sections = result.split("\n## ")[1:]
    assert len(sections) == 4, result
    assert "Error: an invalid URL on the way" in sections[0]
    assert "Around the Wash the range reaches seven metres" in sections[1]
    assert "Error:" in sections[2] and "Invalid URL" in sections[2]
    assert "plain notes\nline two" in sections[3]
