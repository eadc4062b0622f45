"""The browser tools' cost in the user's local sandbox, on pages served on loopback:

- a cold browser: one action with a Chromium of its own (started, the page loaded, the snapshot
  taken, Chromium ended), with a fresh profile and with the profile of the runs before; this is
  a turn's first action, and every action outside a turn;
- a warm browser: the same action on the turn's browser (``WarmBrowser``, Chromium already
  running), and a ``browser_snapshot`` of the open page on each kind (a cold one reopens it);
- the snapshot's size in cl100k tokens for a typical article page
  (iris_testing.web_fakes.ARTICLE) and the form page.

Usage: .venv/bin/python bench/browser.py [--runs 5] [--isolation bwrap|none]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from prompt_size import encoder

from core.browser.links import pss_kb
from core.browser.sandboxed import PROFILE, WarmBrowser, command_for, drive
from core.browser.session import answer_of, page_view
from core.config import Settings
from iris_testing.browser_site import BrowserSite
from iris_testing.server import serve
from iris_testing.web_fakes import FakeSite
from sandboxes.local import LocalSandbox
from sandboxes.options import SandboxOptions


async def timed(box: LocalSandbox, settings: Settings, action: str, warm: WarmBrowser | None,
                **args: Any) -> tuple[float, str]:
    command = command_for(settings, action, args)
    started = time.perf_counter()
    result = await (warm.act(box, command, None) if warm else drive(box, command))
    elapsed = time.perf_counter() - started
    answer = answer_of(result)
    assert answer["ok"], answer
    return elapsed, page_view(answer, settings.browser_snapshot_chars)


async def main(runs: int, isolation: str) -> None:
    enc = encoder()
    site, article = BrowserSite(), FakeSite()
    with tempfile.TemporaryDirectory() as tmp, site.served() as s, serve(article.app) as a:
        home = Path(tmp)
        settings = Settings(
            home=home, web_allow_hosts=[f"127.0.0.1:{s.port}", f"127.0.0.1:{a.port}"]
        )
        box = LocalSandbox("bench", home=home, options=SandboxOptions(local_isolation=isolation))  # type: ignore[arg-type]

        @asynccontextmanager
        async def use() -> AsyncIterator[LocalSandbox]:
            yield box

        page = f"{s.url}/js"
        fresh, kept, cold_snap, warm_nav, warm_snap = [], [], [], [], []
        for _ in range(runs):
            shutil.rmtree(home / "workspaces" / "bench" / PROFILE, ignore_errors=True)
            fresh.append((await timed(box, settings, "navigate", None, url=page))[0])
        for _ in range(runs):
            kept.append((await timed(box, settings, "navigate", None, url=page))[0])
            cold_snap.append((await timed(box, settings, "snapshot", None))[0])
        warm = WarmBrowser(settings, use)
        await timed(box, settings, "navigate", warm, url=page)  # starts it
        for _ in range(runs):
            warm_nav.append((await timed(box, settings, "navigate", warm, url=page))[0])
            warm_snap.append((await timed(box, settings, "snapshot", warm))[0])
        held = chromium_pss_mb(home / "workspaces" / "bench")
        await warm.aclose()
        _, text = await timed(box, settings, "navigate", None, url=f"{a.url}/article")
        _, form = await timed(box, settings, "navigate", None, url=f"{s.url}/form")
    print(f"a JavaScript-drawn page, {isolation}, median of {runs}:")
    print(f"  navigate, cold browser, fresh profile  {ms(fresh)}")
    print(f"  navigate, cold browser, kept profile   {ms(kept)}")
    print(f"  navigate, warm browser                 {ms(warm_nav)}")
    print(f"  snapshot, cold browser (page reopened) {ms(cold_snap)}")
    print(f"  snapshot, warm browser                 {ms(warm_snap)}")
    print(f"Chromium's memory while warm (PSS of its processes): {held:.0f} MiB")
    print(
        f"snapshot tokens (cl100k): article page {len(enc.encode(text))}, "
        f"form page {len(enc.encode(form))}"
    )


def chromium_pss_mb(workspace: Path) -> float:
    """The proportional set size of every Chromium process working in ``workspace``, compared
    by device and inode (inside bubblewrap the workspace has another path)."""
    here = workspace.stat()
    total = 0
    for proc in Path("/proc").iterdir():
        try:
            if "chromium" not in os.readlink(proc / "exe"):
                continue
            st = os.stat(proc / "cwd")
            if (st.st_dev, st.st_ino) != (here.st_dev, here.st_ino):
                continue
            total += pss_kb(int(proc.name))
        except (OSError, ValueError):
            continue
    return total / 1024


def ms(times: list[float]) -> str:
    return f"{sorted(times)[len(times) // 2] * 1000:6.0f} ms"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--isolation", default="bwrap", choices=["bwrap", "none"])
    ns = parser.parse_args()
    asyncio.run(main(ns.runs, ns.isolation))
