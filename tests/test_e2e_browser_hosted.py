"""A hosted browser (``IRIS_BROWSER_CDP_URL``) end to end over real HTTP: a real Chromium started
with ``--remote-debugging-port`` plays the provider's endpoint. The browser tools drive it
instead of a Chromium in the sandbox; each action gets its own browser context, so a sign-in
lasts for its user (cookies kept in their workspace) and for no one else; the endpoint's
address never enters a workspace."""

import json
import subprocess

import pytest

from iris_testing.browser import chromium_path
from iris_testing.browser_site import BrowserSite
from iris_testing.llm_server import ScriptedLLM
from iris_testing.waiting import wait_until
from tests.fakes.stack import emulator_stack

pytestmark = [
    pytest.mark.browser,
    pytest.mark.process,
    pytest.mark.skipif(chromium_path() is None, reason="no Chromium executable"),
]


@pytest.fixture
def hosted(tmp_path):
    """A Chromium listening for DevTools on a loopback port; its browser WebSocket URL."""
    profile = tmp_path / "provider-profile"
    proc = subprocess.Popen(
        [
            chromium_path(),
            "--headless=new",
            "--no-sandbox",
            "--remote-debugging-port=0",
            f"--user-data-dir={profile}",
            "--no-first-run",
            "--disable-gpu",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    active = profile / "DevToolsActivePort"
    try:
        wait_until(
            lambda: active.exists() and len(active.read_text().splitlines()) >= 2,
            "the hosted browser listens",
        )
        port, path = active.read_text().splitlines()[:2]
        yield f"ws://127.0.0.1:{port}{path}"
    finally:
        proc.kill()
        proc.wait()


def ask(client, text, user="alice"):
    answer = client.chat.completions.create(
        model="iris", messages=[{"role": "user", "content": text}], user=user
    )
    return answer.choices[0].message.content


def hosted_stack(llm, monkeypatch, s, hosted):
    """The emulator with the browser tools on ``hosted`` and no Chromium in any sandbox."""
    return emulator_stack(
        llm,
        monkeypatch,
        IRIS_WEB_ALLOW_HOSTS=f"127.0.0.1:{s.port}",
        IRIS_BROWSER_CDP_URL=hosted,
        IRIS_BROWSER_CHROMIUM="no-chromium-in-this-sandbox",
    )


def last_tool_result(llm):
    return [m["content"] for m in llm.requests[-1]["messages"] if m["role"] == "tool"][-1]


def test_a_hosted_browser_is_used_and_keeps_each_users_sign_in_apart(hosted, monkeypatch):
    llm, site = ScriptedLLM(), BrowserSite()
    with site.served() as s, hosted_stack(llm, monkeypatch, s, hosted) as stack:
        (
            llm.tool_call("browser_navigate", {"url": f"{s.url}/signin"})
            .tool_call("browser_type", {"ref": "e1", "text": "alice"})
            .tool_call("browser_type", {"ref": "e2", "text": "hunter2"})
            .tool_call("browser_click", {"ref": "e3"})
            .reply("Signed in.")
        )
        assert ask(stack.client, "Sign in as alice, my password is hunter2") == "Signed in."
        assert "Signed in as alice" in last_tool_result(llm)

        llm.tool_call("browser_navigate", {"url": f"{s.url}/account"}).reply("Still in.")
        assert ask(stack.client, "Am I still signed in?") == "Still in."
        assert "Signed in as alice" in last_tool_result(llm)

        llm.tool_call("browser_navigate", {"url": f"{s.url}/account"}).reply("Bob is out.")
        assert ask(stack.client, "Am I signed in?", user="bob") == "Bob is out."
        assert "Not signed in" in last_tool_result(llm)

        llm.tool_call("browser_navigate", {"url": "http://169.254.169.254/latest/"}).reply("No.")
        ask(stack.client, "Open the metadata page")
        assert "not a public address" in last_tool_result(llm)

        cookies = [cookie for path, cookie in site.hits if path == "/account"]
        assert cookies == ["session=user-alice", "session=user-alice", ""]
        spaces = stack.runtime.settings.home / "workspaces"
        files = [p for p in spaces.rglob("*") if p.is_file()]
        assert files and not any(hosted.encode() in p.read_bytes() for p in files)
        assert not list(spaces.rglob("profile"))  # no Chromium ran in a sandbox


def test_a_hosted_browser_keeps_the_page_for_the_turn_and_its_context_ends_with_it(
    hosted, monkeypatch
):
    """On the endpoint too, one browser context serves the turn: what a click loaded is there
    for the snapshot after it (the page was opened once), and the context is disposed of when
    the turn ends (the provider's browser has no context left)."""
    llm, site = ScriptedLLM(), BrowserSite()
    with site.served() as s, hosted_stack(llm, monkeypatch, s, hosted) as stack:
        (
            llm.tool_call("browser_navigate", {"url": f"{s.url}/more"})
            .tool_call("browser_click", {"ref": "e1"})
            .tool_call("browser_snapshot", {})
            .reply("Three notices.")
        )
        assert ask(stack.client, "What are the harbour notices?") == "Three notices."
        assert "Notice 3: fog signal testing" in last_tool_result(llm)
        assert [p for p, _ in site.hits if p == "/more"] == ["/more"]
        assert browser_contexts(hosted) == []


def browser_contexts(url):
    """The browser contexts open on the endpoint (``Target.getBrowserContexts``)."""
    from core.browser.cdp_socket import CdpSocket

    ws = CdpSocket(url, 10.0)
    try:
        ws.send(json.dumps({"id": 1, "method": "Target.getBrowserContexts"}))
        while True:
            reply = json.loads(ws.recv() or "{}")
            if reply.get("id") == 1:
                return reply["result"]["browserContextIds"]
    finally:
        ws.close()
