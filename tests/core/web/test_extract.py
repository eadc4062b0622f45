"""web_extract: readable text from HTML, PDF and plain text served on loopback."""

import asyncio

import pytest

from core.contracts.toolkit import Toolset
from core.parsers.child import BLOCK, SKIP, tidy, visible_text
from core.tools.web_extract import WebExtract
from iris_testing.scripted_model import call
from iris_testing.server import serve
from iris_testing.web_fakes import ARTICLE, FakeSite


@pytest.fixture(scope="module")
def site():
    fake = FakeSite()
    with serve(fake.app) as running:
        yield fake, running


def extract(ctx, running, *paths, allow=True, **args):
    allow_hosts = [f"127.0.0.1:{running.port}"] if allow else []
    ctx.settings = ctx.settings.model_copy(update={"web_allow_hosts": allow_hosts})
    urls = [f"{running.url}{p}" for p in paths]
    tools = Toolset([WebExtract()])
    return asyncio.run(tools.call(ctx, call("web_extract", urls=urls, **args))).content


@pytest.mark.process  # starts a child process (make check runs without them)
def test_an_article_is_its_main_text(ctx, site):
    _, running = site
    out = extract(ctx, running, "/article")
    assert out.startswith('<untrusted source="web_extract">')
    assert "## Tides of the North Sea" in out and "(html, " in out
    assert "Around the Wash the range reaches seven metres" in out
    for noise in ("SCRIPT-NOT-TEXT", "NAV-LINK-NOT-TEXT", "FOOTER-NOT-TEXT", ".x{color"):
        assert noise not in out
    assert ctx.tainted_by == {"web_extract"}


@pytest.mark.process  # starts a child process (make check runs without them)
def test_pdf_text_and_several_urls_at_once(ctx, site):
    _, running = site
    out = extract(ctx, running, "/report.pdf", "/notes.txt", "/photo.png")
    assert "--- page 1 ---\nQuarterly report\nRevenue grew by 12 percent." in out
    assert "plain notes\nline two" in out
    assert "Error: image/png is not text, HTML or PDF" in out


def test_refused_without_the_allow_list(ctx, site):
    fake, running = site
    before = len(fake.hits)
    out = extract(ctx, running, "/article", allow=False)
    assert "Refused: 127.0.0.1 is a loopback address" in out
    assert "seven metres" not in out and len(fake.hits) == before


@pytest.mark.process  # starts a child process (make check runs without them)
def test_the_character_cap_per_url(ctx, site):
    _, running = site
    out = extract(ctx, running, "/endless", max_chars=500)
    assert "more characters not shown]" in out and "download cut at the byte cap" in out
    body = out.split("\n\n", 1)[1]
    assert len(body) < 2_000


def test_the_fallback_extractor_keeps_visible_text_only():
    text = tidy(visible_text(ARTICLE, SKIP, BLOCK))
    assert "seven metres" in text and "SCRIPT-NOT-TEXT" not in text
    assert "NAV-LINK-NOT-TEXT" not in text and "FOOTER-NOT-TEXT" not in text
