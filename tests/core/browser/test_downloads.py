"""Downloads of the real headless Chromium, run by the driver in a workspace: they land in
``downloads/`` within the size and count caps; over a cap they are cancelled and removed; a
``downloads`` that points outside the workspace is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.browser import driver
from core.browser.sandboxed import command_for
from core.config import Settings
from iris_testing.browser import chromium_path
from iris_testing.browser_site import BrowserSite

# The driver waits for Chromium's events with timed waits (queue.get(timeout=…)). Under
# libfaketime (CI's second pass) such a wait never runs out, so these hang there; the first
# pass runs them on the real clock (as tests/core/lanes/test_pool.py's timed-wait tests).
timed_waits_expire = pytest.mark.skipif(
    bool(os.environ.get("FAKETIME")),
    reason="timed waits never run out under libfaketime; run in the first pass")

pytestmark = [
    timed_waits_expire,
    pytest.mark.browser,
    pytest.mark.process,
    pytest.mark.skipif(chromium_path() is None, reason="no Chromium executable"),
]


@pytest.fixture
def site():
    site = BrowserSite()
    with site.served() as s:
        yield s


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    ws = tmp_path / "workspace"
    (ws / ".iris/browser").mkdir(parents=True)
    monkeypatch.chdir(ws)
    return ws


def fetch(site, url, **caps):
    settings = Settings(home=site.home, web_allow_hosts=[f"127.0.0.1:{site.port}"], **caps)
    cmd = command_for(settings, "navigate", {"url": url})
    cmd["chromium"] = chromium_path()
    return driver.run(cmd)


def files(folder):
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


@pytest.fixture
def s(site, tmp_path):
    site.home = tmp_path / "home"
    return site


def expected(size):
    return bytes(i % 251 for i in range(size))


def test_a_download_lands_in_the_workspace_within_the_caps(s, workspace):
    out = fetch(s, f"{s.url}/file?size=5000&name=../../report.csv")
    assert out["ok"], out
    (kept,) = out["downloads"]
    assert kept["bytes"] == 5000 and kept["name"].endswith("report.csv") and "/" not in kept["name"]
    assert (workspace / "downloads" / kept["name"]).read_bytes() == expected(5000)
    assert files(workspace / "downloads/.incoming") == []
    assert not (workspace.parent / "report.csv").exists()
    fetch(s, f"{s.url}/file?size=10&name=report.csv")
    again = fetch(s, f"{s.url}/file?size=10&name=report.csv")
    assert again["downloads"] == [{"name": "report (2).csv", "bytes": 10}]


def test_a_download_over_the_size_cap_is_refused_and_removed(s, workspace):
    out = fetch(s, f"{s.url}/file?size=300000&name=big.bin", browser_download_max_bytes=100_000)
    assert out["downloads"] == []
    assert any("big.bin: larger than the 100000-byte cap" in r for r in out["refused"]), out
    assert files(workspace / "downloads") == [".incoming"]
    assert files(workspace / "downloads/.incoming") == []


def test_the_count_cap_holds(s, workspace):
    first = fetch(s, f"{s.url}/file?size=10&name=a.txt", browser_downloads_max=1)
    second = fetch(s, f"{s.url}/file?size=10&name=b.txt", browser_downloads_max=1)
    assert first["downloads"] == [{"name": "a.txt", "bytes": 10}]
    assert second["downloads"] == []
    assert any("already holds 1" in r for r in second["refused"]), second
    assert files(workspace / "downloads") == [".incoming", "a.txt"]
    assert files(workspace / "downloads/.incoming") == []


def test_a_downloads_link_out_of_the_workspace_is_refused(s, workspace, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "downloads").symlink_to(outside)
    out = fetch(s, f"{s.url}/file?size=10&name=a.txt")
    assert not out["ok"] and "not a folder of the workspace" in out["error"], out
    assert files(outside) == []
    assert browsers_in(workspace) == []


def browsers_in(workspace):
    """Chromium processes the driver started in ``workspace`` (none may outlive its run)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            here = (proc / "cwd").resolve()
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if here == workspace.resolve() and b"--remote-debugging-pipe" in cmdline:
            found.append(proc.name)
    return found
