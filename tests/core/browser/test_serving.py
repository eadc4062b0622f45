"""The turn's browser server (``driver.py --serve``) and its clients (``--ask``), run as sandbox
commands in a local workspace with real Chromium: what an action may set, what the socket takes
from other processes in the sandbox, and how the server ends."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from core.browser.sandboxed import DIR, SOCKET, WarmBrowser, ask, command_for, write_driver
from core.browser.session import answer_of
from core.config import Settings
from iris_testing.browser import chromium_path
from iris_testing.browser_site import BrowserSite
from iris_testing.server import serve
from iris_testing.waiting import wait_until
from iris_testing.web_fakes import FakeSite
from sandboxes.local import LocalSandbox

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.process,
    pytest.mark.browser,
    pytest.mark.skipif(chromium_path() is None, reason="no Chromium executable"),
]


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def sites():
    intranet, site = FakeSite(), BrowserSite()
    with serve(intranet.app) as inner, site.served() as s:
        yield s, inner, intranet


@pytest.fixture
def box(tmp_path):
    return LocalSandbox("alice", home=tmp_path / "home")


def settings_for(tmp_path, s):
    return Settings(home=tmp_path, web_allow_hosts=[f"127.0.0.1:{s.port}"],
                    browser_chromium=chromium_path())


async def start_server(box, settings, idle=60.0):
    await write_driver(box)
    cmd = {**command_for(settings, "serve", {}), "idle": idle}
    await box.write_file(f"{DIR}/serve.json", json.dumps(cmd).encode())
    server = asyncio.create_task(
        box.exec(f"python3 {DIR}/driver.py --serve < {DIR}/serve.json", timeout=120)
    )
    return server


async def act(box, settings, action, wait=30.0, **args):
    return answer_of(await ask(box, command_for(settings, action, args), None, wait))


def send_raw(data: bytes) -> bytes:
    """What another process in the sandbox could send to the socket (from the workspace: the
    path is relative there, as the driver's, since a Unix socket's path is at most 107 bytes)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(SOCKET)
        try:
            conn.sendall(data)
            conn.shutdown(socket.SHUT_WR)
            return b"".join(iter(lambda: conn.recv(65536), b""))
        except (BrokenPipeError, ConnectionResetError):  # dropped before it was all sent
            return b""


def last_json(result):
    return json.loads(result.stdout.strip().splitlines()[-1])


async def test_an_action_sets_nothing_but_itself(box, sites, tmp_path, monkeypatch):
    """Where the browser may go is the server's: an action sent straight to the socket with an
    allow list of its own (as any program in the sandbox could) is held to the server's."""
    s, inner, intranet = sites
    settings = settings_for(tmp_path, s)
    server = await start_server(box, settings)
    first = await act(box, settings, "navigate", url=f"{s.url}/js")
    assert first["ok"] and first["warm"] is False, first
    monkeypatch.chdir(box.workspace)
    widened = json.loads(send_raw(json.dumps({
        "action": "navigate", "args": {"url": f"{inner.url}/"}, "timeout": 20,
        "allow": [f"127.0.0.1:{inner.port}"], "memory_mb": 100_000, "chromium": "/bin/false",
    }).encode()))
    assert not widened["ok"] and "not a public address" in widened["error"], widened
    assert intranet.hits == []
    assert (await act(box, settings, "snapshot"))["warm"] is True  # the same Chromium
    assert (await act(box, settings, "quit"))["ok"]
    ended = await server
    assert ended.exit_code == 0 and last_json(ended) == {"ok": True, "served": 3}, ended


async def test_what_is_not_an_action_is_dropped_and_the_server_goes_on(box, sites, tmp_path,
                                                                       monkeypatch):
    s, _, _ = sites
    settings = settings_for(tmp_path, s)
    server = await start_server(box, settings)
    assert (await act(box, settings, "navigate", url=f"{s.url}/js"))["ok"]
    monkeypatch.chdir(box.workspace)
    for junk in (b"not json", b"[1, 2]", json.dumps({"action": 7}).encode(), b"{" * 2_000_000):
        assert send_raw(junk) == b""
    page = await act(box, settings, "snapshot")
    assert page["warm"] is True and "text: High water at 07:12 at Wash Point" in page["lines"]
    await act(box, settings, "quit")
    assert last_json(await server)["served"] == 2


async def test_an_idle_server_ends_by_itself_and_a_second_one_leaves_the_first(box, sites,
                                                                                 tmp_path):
    s, _, _ = sites
    settings = settings_for(tmp_path, s)
    first = await start_server(box, settings)
    assert (await act(box, settings, "navigate", url=f"{s.url}/js"))["ok"]
    second = await (await start_server(box, settings))
    assert last_json(second) == {"ok": True, "already": True}
    assert (await act(box, settings, "snapshot"))["warm"] is True  # the first still serves
    await act(box, settings, "quit")
    await first

    idle = await (await start_server(box, settings, idle=0.5))  # nothing asked: it ends
    assert idle.exit_code == 0 and last_json(idle) == {"ok": True, "served": 0}
    assert not (box.workspace / SOCKET).exists()


async def test_without_a_server_an_action_runs_alone_and_a_quit_does_nothing(box, sites,
                                                                             tmp_path, monkeypatch):
    s, _, _ = sites
    settings = settings_for(tmp_path, s)
    await write_driver(box)
    assert await act(box, settings, "quit", wait=0) == {"ok": True}
    # A socket file left by a server that was killed: no one listens on it
    monkeypatch.chdir(box.workspace)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(SOCKET)
    stale.close()
    alone = await act(box, settings, "navigate", wait=0, url=f"{s.url}/js")
    assert alone["ok"] and "warm" not in alone, alone
    server = await start_server(box, settings)  # takes the stale path over
    assert (await act(box, settings, "snapshot"))["warm"] is False
    await act(box, settings, "quit")
    assert last_json(await server)["served"] == 1
    waited = await act(box, settings, "snapshot", wait=0.5)
    assert not waited["ok"] and waited["no_server"], waited


async def test_a_browser_near_its_idle_end_is_retired_before_the_next_action(box, sites,
                                                                             tmp_path):
    """An action sent as the server reaches its idle time could find it leaving; past 0.8 of
    that time Iris ends it cleanly first and starts another, which reopens the page (what its
    scripts had added is gone, the page itself is there). The clock is Iris' own, injected."""
    s, _, _ = sites
    settings = settings_for(tmp_path, s).model_copy(update={"browser_idle_seconds": 100.0})
    now = [1000.0]

    @asynccontextmanager
    async def use():
        yield box

    warm = WarmBrowser(settings, use, clock=lambda: now[0])

    async def act_warm(action, **args):
        return answer_of(await warm.act(box, command_for(settings, action, args), None))

    assert (await act_warm("navigate", url=f"{s.url}/more"))["warm"] is False
    assert "Notice 3: fog signal testing" in str((await act_warm("click", ref="e1"))["lines"])
    now[0] += 79
    kept = await act_warm("snapshot")
    assert kept["warm"] is True and "Notice 3: fog signal testing" in str(kept["lines"])
    now[0] += 81
    again = await act_warm("snapshot")
    assert again["warm"] is False and warm.starts == 2, again
    assert "text: Notice 1: dredging at berth 4" in again["lines"]
    assert "Notice 3" not in str(again["lines"])
    await warm.aclose()
    assert not warm.running and not (box.workspace / SOCKET).exists()


async def test_a_browser_that_cannot_start_is_said_and_the_server_goes_on(box, sites, tmp_path):
    """A downloads folder that leaves the workspace stops the browser before Chromium starts;
    the action says why, the server stays up, and an action after the folder is fixed works."""
    s, _, _ = sites
    settings = settings_for(tmp_path, s)
    outside = tmp_path / "outside"
    outside.mkdir()
    box.workspace.mkdir(parents=True, exist_ok=True)
    (box.workspace / "downloads").symlink_to(outside)
    server = await start_server(box, settings)
    refused = await act(box, settings, "navigate", url=f"{s.url}/js")
    assert not refused["ok"] and "not a folder of the workspace" in refused["error"], refused
    (box.workspace / "downloads").unlink()
    page = await act(box, settings, "navigate", url=f"{s.url}/js")
    assert page["ok"] and page["warm"] is False, page
    await act(box, settings, "quit")
    assert last_json(await server)["served"] == 1
    assert list(outside.iterdir()) == []


async def test_a_chromium_that_died_between_actions_is_replaced_at_the_next(box, sites,
                                                                            tmp_path):
    s, _, _ = sites
    settings = settings_for(tmp_path, s)
    server = await start_server(box, settings)
    assert (await act(box, settings, "navigate", url=f"{s.url}/js"))["ok"]
    (pid,) = chromiums_in(box.workspace)
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not chromiums_in(box.workspace), "Chromium is gone")
    page = await act(box, settings, "snapshot")
    assert page["ok"] and page["warm"] is False, page  # a new one, on the page left open
    assert "text: High water at 07:12 at Wash Point" in page["lines"]
    await act(box, settings, "quit")
    assert last_json(await server)["served"] == 2


def chromiums_in(workspace):
    """The main Chromium process working in ``workspace`` (its children have other flags)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes()
            if b"--remote-debugging-pipe" not in cmdline or b"--type=" in cmdline:
                continue
            if (proc / "cwd").resolve() == workspace.resolve():
                found.append(int(proc.name))
        except (OSError, ValueError):
            continue
    return found
