"""What a newcomer meets in the emulator, over real HTTP: the person at its terminal (the
account `iris chat` talks as) is the owner of that local deployment — /model, the chat's
/dashboard link and `iris dashboard link` agree — and terminal chats are labelled "terminal"
with a title rather than an id."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx

from local_dev.clikit import default_account
from tests.dashboard.conftest import LINK
from tests.fakes.stack import API_KEY

ROOT = Path(__file__).resolve().parents[2]


def sign_in(dash, web, link: str) -> str:
    found = LINK.search(link)
    assert found is not None, link
    token = found[1]
    opened = web.post("/ui/signin", data={"t": token}, headers={"origin": dash.url})
    assert opened.status_code == 303
    return opened.headers["location"]


def test_the_terminal_user_owns_the_emulator_and_every_link_says_so(dash, web):
    me = default_account().split(":", 1)[1]
    assert dash.ask("/model openai/another-model", me) == (
        "Switched your model to openai/another-model.")
    refused = dash.ask("/model openai/another-model", "alice")
    assert "Model not changed" in refused and "IRIS_OWNER_ACCOUNTS" in refused
    assert "(this one is http:alice)" in refused

    sign_in(dash, web, dash.link_for(me))
    assert web.get("/ui/owner/users").status_code == 200  # the chat's link: owner pages

    with httpx.Client(base_url=dash.url, timeout=30) as alice_web:
        sign_in(dash, alice_web, dash.link_for("alice"))
        assert alice_web.get("/ui/owner/users").status_code == 403

    cli = subprocess.run([sys.executable, "-m", "local_dev.cli", "dashboard", "link",
                          "--base-url", dash.url], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert cli.returncode == 0, cli.stderr
    assert f"user {dash.user_id(me)} (owner)" in cli.stderr


def test_terminal_chats_are_labelled_terminal_and_listed_by_title(dash, web):
    dash.llm.reply("Hello!")
    answer = httpx.post(f"{dash.url}/v1/chat/completions",
                        headers={"Authorization": f"Bearer {API_KEY}",
                                 "X-Iris-Client": "terminal"},
                        json={"messages": [{"role": "user", "content": "hi"}], "user": "alice"},
                        timeout=60)
    assert answer.status_code == 200, answer.text
    session_id = answer.headers["x-iris-session"]
    user_id = dash.user_id("alice")
    assert dash.runtime.store.sessions.get(user_id, session_id).platform == "terminal"

    bad = httpx.post(f"{dash.url}/v1/chat/completions",
                     headers={"Authorization": f"Bearer {API_KEY}", "X-Iris-Client": "evil"},
                     json={"messages": [{"role": "user", "content": "hi"}], "user": "alice"},
                     timeout=60)
    assert bad.status_code == 400 and "X-Iris-Client" in bad.text

    sign_in(dash, web, dash.link_for("alice"))
    page = web.get(f"/ui/u/{user_id}/sessions").text
    row = page.split(f"/sessions/{session_id}\">")[1].split("</tr>")[0]
    assert "<td>terminal</td>" in row and not row.startswith(session_id)
    assert row.startswith("Untitled conversation")


def test_the_memory_page_shows_what_remember_kept_and_how_to_use_it(dash, web):
    assert dash.ask("/remember I live in Lisbon", "alice").startswith("Added to user.")
    sign_in(dash, web, dash.link_for("alice"))
    page = web.get(f"/ui/u/{dash.user_id('alice')}/memory").text
    assert "I live in Lisbon" in page
    hint = page.split('id="remember-hint">')[1].split("</p>")[0]
    assert "<code>/remember TEXT</code>" in hint and "<code>/forget TEXT</code>" in hint
