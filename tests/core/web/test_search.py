"""web_search against fake SearXNG, Brave and Tavily servers answering in their real shapes."""

import asyncio

import pytest

from core.config import load_settings
from core.contracts.toolkit import Toolset
from core.tools.web_search import WebSearch
from core.web.search import problem, provider_for
from iris_testing.scripted_model import call
from iris_testing.server import serve
from iris_testing.web_fakes import FakeSearch


@pytest.fixture(scope="module")
def engine():
    fake = FakeSearch()
    with serve(fake.app) as running:
        yield fake, running.url


def settings_for(monkeypatch, **env):
    for name, value in env.items():
        monkeypatch.setenv(f"IRIS_WEB_SEARCH_{name.upper()}", value)
    return load_settings()


def run_tool(ctx, settings, **args):
    ctx.settings = settings
    message = asyncio.run(Toolset([WebSearch()]).call(ctx, call("web_search", **args)))
    return message.content


@pytest.mark.parametrize(("provider", "base"), [
    ("searxng", ""), ("brave", "/res/v1"), ("tavily", ""),
])
def test_each_provider_returns_title_url_snippet_wrapped(engine, monkeypatch, ctx, provider,
                                                         base):
    fake, url = engine
    settings = settings_for(monkeypatch, provider=provider, url=url + base, api_key="key-123")
    out = run_tool(ctx, settings, query="north sea tides", count=2)
    assert out.startswith('<untrusted source="web_search">')
    assert "1. Tide tables for the Wash\n   https://tides.example/wash\n" in out
    assert "High water at King's Lynn is at 06:12 & 18:40 today." in out  # tags, entities gone
    assert "2. North Sea storm surges" in out and "3." not in out
    assert ctx.tainted_by == {"web_search"}
    sent = fake.requests[-1]
    assert sent["provider"] == provider
    if provider == "searxng":
        assert sent["params"] == {"q": "north sea tides", "format": "json"}
    elif provider == "brave":
        assert sent["params"] == {"q": "north sea tides", "count": "2"}
        assert sent["token"] == "key-123"
    else:
        assert sent["body"]["query"] == "north sea tides" and sent["body"]["max_results"] == 2
        assert sent["auth"] == "Bearer key-123"


@pytest.mark.parametrize(("provider", "base"), [("brave", "/res/v1"), ("tavily", "")])
def test_a_wrong_key_is_said_plainly(engine, monkeypatch, ctx, provider, base):
    _, url = engine
    settings = settings_for(monkeypatch, provider=provider, url=url + base, api_key="wrong")
    out = run_tool(ctx, settings, query="tides")
    assert out.startswith("Error: ") and "HTTP 401" in out and "IRIS_WEB_SEARCH_API_KEY" in out


def test_not_offered_without_a_provider(monkeypatch):
    settings = load_settings()
    assert provider_for(settings) is None
    assert "IRIS_WEB_SEARCH_PROVIDER" in (problem(settings) or "")
    assert "web_search" not in Toolset([WebSearch()]).offered(settings)
    brave_without_key = settings_for(monkeypatch, provider="brave")
    assert problem(brave_without_key) == "brave needs IRIS_WEB_SEARCH_API_KEY"
    assert "web_search" not in Toolset([WebSearch()]).offered(brave_without_key)
    searx = settings_for(monkeypatch, provider="SearXNG", url="http://127.0.0.1:1")
    assert "web_search" in Toolset([WebSearch()]).offered(searx)


def test_an_unreachable_provider_is_an_error_for_the_model(monkeypatch, ctx):
    from iris_testing.server import free_port

    settings = settings_for(monkeypatch, provider="searxng",
                            url=f"http://127.0.0.1:{free_port()}")
    out = run_tool(ctx, settings, query="tides")
    assert out.startswith("Error: SearXNG did not answer: ConnectError")
