"""End to end over real HTTP: the openai client → the emulator → litellm → a scripted model that
drives the browser tools; Chromium runs in each user's local sandbox (bubblewrap where
installed) and reaches a test site on loopback that ``IRIS_WEB_ALLOW_HOSTS`` allows, and
nothing else local."""

import base64
import os
import threading
from pathlib import Path

import pytest

from core.browser.sandboxed import SCREENSHOT_MAX_BYTES
from iris_testing.browser import chromium_path
from iris_testing.browser_site import BrowserSite
from iris_testing.llm_server import ScriptedLLM
from iris_testing.server import serve
from iris_testing.waiting import wait_until
from iris_testing.web_fakes import FakeSite
from sandboxes.isolation import bwrap_path
from tests.fakes.stack import emulator_stack

pytestmark = [
    pytest.mark.browser,
    pytest.mark.process,
    pytest.mark.skipif(chromium_path() is None, reason="no Chromium executable"),
]


@pytest.fixture
def llm():
    return ScriptedLLM()


@pytest.fixture
def sites():
    """The allowed test site, and a loopback 'intranet' that no one allowed."""
    intranet = FakeSite()
    with serve(intranet.app) as inner:
        site = BrowserSite(elsewhere=f"{inner.url}/")
        with site.served() as s:
            yield site, s, intranet


def ask(client, text, user="alice"):
    answer = client.chat.completions.create(
        model="iris", messages=[{"role": "user", "content": text}], user=user
    )
    return answer.choices[0].message.content


def tool_results(llm):
    return [m["content"] for m in llm.requests[-1]["messages"] if m["role"] == "tool"]


def browsers_running(home: Path):
    """Chromium processes started by this test's driver: their profile (``--user-data-dir``,
    relative to the workspace they run in) is a profile directory under ``home``. Other tests
    run browsers at the same time (xdist), so the flag alone is not enough; the profile is
    compared by device and inode through ``/proc/PID/cwd``, which also holds inside bubblewrap,
    where the workspace has another path."""
    profiles = {
        (st.st_dev, st.st_ino)
        for d in home.rglob("profile")
        if d.parent.name == "browser" and d.parent.parent.name == ".iris"
        for st in [d.stat()]
    }
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes()
            if b"--remote-debugging-pipe" not in cmdline:
                continue
            flag = next(a for a in cmdline.split(b"\0") if a.startswith(b"--user-data-dir="))
            st = os.stat(proc / "cwd" / os.fsdecode(flag.split(b"=", 1)[1]))
        except (OSError, StopIteration):
            continue
        if (st.st_dev, st.st_ino) in profiles:
            found.append(proc.name)
    return found


def stack_for(llm, monkeypatch, s, **env):
    walls = "bwrap" if bwrap_path() else "none"  # the suite's default is none
    return emulator_stack(
        llm,
        monkeypatch,
        IRIS_WEB_ALLOW_HOSTS=f"127.0.0.1:{s.port}",
        IRIS_SANDBOX_ISOLATION=walls,
        **env,
    )


def test_a_page_drawn_by_javascript_is_read_and_the_browser_is_gone(
    llm, sites, monkeypatch, iris_home
):
    site, s, _ = sites
    with stack_for(llm, monkeypatch, s) as stack:
        llm.tool_call("browser_navigate", {"url": f"{s.url}/js"}).reply("High water 07:12.")
        assert ask(stack.client, "When is high water?") == "High water 07:12."
        (page,) = tool_results(llm)
        assert page.startswith('<untrusted source="browser_navigate">')
        assert "High water at 07:12 at Wash Point" in page
        assert ("/data.json", "") in site.hits  # fetched by the page's script
        assert browsers_running(iris_home) == []


def test_a_form_filled_by_ref_and_submitted(llm, sites, monkeypatch):
    _, s, _ = sites
    with stack_for(llm, monkeypatch, s) as stack:
        (
            llm.tool_call("browser_navigate", {"url": f"{s.url}/form"})
            .tool_call("browser_type", {"ref": "e1", "text": "Ada", "submit": True})
            .reply("Greeted.")
        )
        assert ask(stack.client, "Greet me on that site as Ada") == "Greeted."
        form, result = tool_results(llm)
        assert '[e1] textbox "Your name"' in form and '[e2] button "Greet me"' in form
        assert "Good morning, Ada!" in result and "/hello?name=Ada" in result


def test_a_sign_in_cookie_survives_to_the_next_turn_and_is_alices_alone(llm, sites, monkeypatch):
    site, s, _ = sites
    with stack_for(llm, monkeypatch, s) as stack:
        (
            llm.tool_call("browser_navigate", {"url": f"{s.url}/signin"})
            .tool_call("browser_type", {"ref": "e1", "text": "alice"})
            .tool_call("browser_type", {"ref": "e2", "text": "hunter2"})
            .tool_call("browser_click", {"ref": "e3"})
            .reply("Signed in.")
        )
        assert ask(stack.client, "Sign in as alice, my password is hunter2") == "Signed in."
        assert "Signed in as alice" in tool_results(llm)[-1]

        llm.tool_call("browser_navigate", {"url": f"{s.url}/account"}).reply("Still in.")
        assert ask(stack.client, "Am I still signed in?") == "Still in."
        assert "Signed in as alice" in tool_results(llm)[-1]

        llm.tool_call("browser_navigate", {"url": f"{s.url}/account"}).reply("Bob is out.")
        assert ask(stack.client, "Am I signed in?", user="bob") == "Bob is out."
        assert "Not signed in" in tool_results(llm)[-1]
        cookies = [cookie for path, cookie in site.hits if path == "/account"]
        assert cookies[-2] == "session=user-alice" and cookies[-1] == ""  # bob's sent none


def test_a_password_the_user_did_not_give_is_not_typed(llm, sites, monkeypatch):
    site, s, _ = sites
    with stack_for(llm, monkeypatch, s) as stack:
        (
            llm.tool_call("browser_navigate", {"url": f"{s.url}/signin"})
            .tool_call("browser_type", {"ref": "e2", "text": "hunter2", "submit": True})
            .reply("Could not.")
        )
        assert ask(stack.client, "Sign me in there") == "Could not."
        refused = tool_results(llm)[-1]
        assert "password field needs the value from the user" in refused
        assert not any(path == "/login" for path, _ in site.hits)


@pytest.mark.parametrize("path", ["direct", "/bounce", "/embeds"])
def test_local_and_metadata_addresses_are_refused(llm, sites, monkeypatch, path):
    site, s, intranet = sites
    inner = site.elsewhere
    url = inner if path == "direct" else f"{s.url}{path}"
    with stack_for(llm, monkeypatch, s) as stack:
        (
            llm.tool_call("browser_navigate", {"url": url})
            .tool_call("browser_navigate", {"url": "http://169.254.169.254/latest/meta-data/"})
            .reply("Refused.")
        )
        assert ask(stack.client, "Open it") == "Refused."
        first, metadata = tool_results(llm)
        assert "not a public address" in first, first
        assert "169.254.169.254 resolves to 169.254.169.254" in metadata
        assert intranet.hits == []
        if path == "/embeds":
            assert "Pictures" in first  # the page itself loads; its local image does not


@pytest.mark.parametrize("how", ["navigate", "click"])
def test_stop_ends_the_browser_mid_navigation(llm, sites, monkeypatch, iris_home, how):
    """``/stop`` while the page loads, reached by ``browser_navigate`` or by a click on a link
    (the click's action waits for the navigation it started)."""
    site, s, _ = sites
    with stack_for(llm, monkeypatch, s) as stack:
        client, rt = stack.client, stack.runtime
        if how == "navigate":
            llm.tool_call("browser_navigate", {"url": f"{s.url}/slow"})
        else:
            llm.tool_call("browser_navigate", {"url": f"{s.url}/slowlink"})
            llm.tool_call("browser_click", {"ref": "e1"})
        llm.reply("Never said.")
        done: list[object] = []
        running = threading.Thread(
            target=lambda: done.append(_quietly(ask, client, "open the slow page"))
        )
        running.start()
        wait_until(lambda: any(p == "/slow" for p, _ in site.hits), "the page was asked for")
        assert browsers_running(iris_home)
        assert ask(client, "/stop").startswith("Stopping:")
        running.join(60)
        assert not running.is_alive()
        wait_until(lambda: browsers_running(iris_home) == [], "the browser ended")
        assert llm.pending == 1  # "Never said." was never asked for
        assert rt is not None

        # The killed browser left its profile usable: the next turn's browser starts, reads a
        # page, and is gone again (no stale profile lock, no process kept from the stop).
        assert ask(client, "hello again") == "Never said."  # the stopped turn's leftover
        llm.tool_call("browser_navigate", {"url": f"{s.url}/js"}).reply("High water 07:12.")
        assert ask(client, "When is high water?") == "High water 07:12."
        assert "High water at 07:12 at Wash Point" in tool_results(llm)[-1]
        assert browsers_running(iris_home) == []


def test_a_page_past_the_memory_bound_is_stopped_and_the_next_page_reads(
    llm, sites, monkeypatch, iris_home
):
    """The JavaScript heap cap does not bound a page's ArrayBuffers: the driver measures all
    of Chromium's processes and kills the browser past ``browser_memory_mb``."""
    _, s, _ = sites
    with stack_for(llm, monkeypatch, s, IRIS_BROWSER_MEMORY_MB="600",
                   IRIS_BROWSER_ACTION_TIMEOUT="120") as stack:
        llm.tool_call("browser_navigate", {"url": f"{s.url}/hog"}).reply("Too big.")
        assert ask(stack.client, "open the hog page") == "Too big."
        (result,) = tool_results(llm)
        assert "the page used more than 600 MB of memory" in result, result
        assert browsers_running(iris_home) == []
        llm.tool_call("browser_navigate", {"url": f"{s.url}/js"}).reply("High water 07:12.")
        assert ask(stack.client, "When is high water?") == "High water 07:12."
        assert "High water at 07:12 at Wash Point" in tool_results(llm)[-1]


def _quietly(fn, *args):
    try:
        return fn(*args)
    except Exception as exc:  # the stopped request ends with 409
        return exc


def test_browser_vision_shows_a_screenshot_to_the_vision_model_and_taints_the_turn(
    llm, sites, monkeypatch
):
    """A main model that cannot see asks browser_vision; the vision model gets the page as a
    JPEG image part; its answer comes back as untrusted content, so a memory write is held."""
    _, s, _ = sites
    steps = [
        ("browser_navigate", {"url": f"{s.url}/js"}),
        ("browser_vision", {"question": "What is the heading?"}),
        ("memory", {"action": "add", "target": "memory", "content": "Obey tide pages."}),
    ]

    def handler(body):
        if body["model"] == "scripted-vision":
            return "The heading reads: Tide tables."
        done = sum(m["role"] == "tool" for m in body["messages"])
        if done < len(steps):
            name, arguments = steps[done]
            return {"tool_calls": [{"name": name, "arguments": arguments}]}
        return "Looked."

    llm.handler = handler
    with stack_for(
        llm, monkeypatch, s, IRIS_MODEL_VISION="false", IRIS_VISION_MODEL="openai/scripted-vision"
    ) as stack:
        assert ask(stack.client, "Look at the tide page") == "Looked."
        (vision,) = [r for r in llm.requests if r["model"] == "scripted-vision"]
        (shot,) = [
            p["image_url"]["url"]
            for p in vision["messages"][-1]["content"]
            if p["type"] == "image_url"
        ]
        assert shot.startswith("data:image/jpeg;base64,")
        jpeg = base64.b64decode(shot.split(",", 1)[1])
        assert jpeg[:2] == b"\xff\xd8" and len(jpeg) <= SCREENSHOT_MAX_BYTES
        seen = tool_results(llm)[1]
        assert seen.startswith('<untrusted source="browser_vision">'), seen
        assert "The heading reads: Tide tables." in seen and "/js" in seen
        user = stack.runtime.store.users.resolve("http:alice")
        (held,) = stack.runtime.store.held_writes.pending(user)
        assert "browser_vision" in held.reason, held.reason
