"""The browser tools' cost: one ``browser_navigate`` (Chromium started in the user's local
sandbox, the page loaded, the snapshot taken, Chromium ended) on a page served on loopback, with
a fresh profile (cold) and with the profile of the runs before (warm); and the snapshot's size in
cl100k tokens for a typical article page (iris_testing.web_fakes.ARTICLE) and the form page.

Usage: .venv/bin/python bench/browser.py [--runs 5] [--isolation bwrap|none]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from pathlib import Path

from prompt_size import encoder

from core.browser.session import PROFILE, answer_of, command_for, drive, page_view
from core.config import Settings
from iris_testing.browser_site import BrowserSite
from iris_testing.server import serve
from iris_testing.web_fakes import FakeSite
from sandboxes.local import LocalSandbox
from sandboxes.options import SandboxOptions


async def navigate(box: LocalSandbox, settings: Settings, url: str) -> tuple[float, str]:
    started = time.perf_counter()
    answer = answer_of(await drive(box, command_for(settings, "navigate", {"url": url})))
    elapsed = time.perf_counter() - started
    assert answer["ok"], answer
    return elapsed, page_view(answer, settings.browser_snapshot_chars)


async def main(runs: int, isolation: str) -> None:
    enc = encoder()
    site, article = BrowserSite(), FakeSite()
    with tempfile.TemporaryDirectory() as tmp, serve(site.app) as s, serve(article.app) as a:
        home = Path(tmp)
        settings = Settings(
            home=home, web_allow_hosts=[f"127.0.0.1:{s.port}", f"127.0.0.1:{a.port}"]
        )
        box = LocalSandbox("bench", home=home, options=SandboxOptions(local_isolation=isolation))  # type: ignore[arg-type]
        cold, warm = [], []
        for _ in range(runs):
            shutil.rmtree(home / "workspaces" / "bench" / PROFILE, ignore_errors=True)
            cold.append((await navigate(box, settings, f"{s.url}/js"))[0])
        for _ in range(runs):
            warm.append((await navigate(box, settings, f"{s.url}/js"))[0])
        _, text = await navigate(box, settings, f"{a.url}/article")
        _, form = await navigate(box, settings, f"{s.url}/form")
        site.released.set()
    med = sorted(cold)[len(cold) // 2], sorted(warm)[len(warm) // 2]
    print(
        f"navigate+snapshot of a JavaScript page, {isolation}, median of {runs}: "
        f"cold profile {med[0] * 1000:.0f} ms, warm profile {med[1] * 1000:.0f} ms"
    )
    print(
        f"snapshot tokens (cl100k): article page {len(enc.encode(text))}, "
        f"form page {len(enc.encode(form))}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--isolation", default="bwrap", choices=["bwrap", "none"])
    ns = parser.parse_args()
    asyncio.run(main(ns.runs, ns.isolation))
