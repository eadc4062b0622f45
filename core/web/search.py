"""Web search providers behind one interface: SearXNG (self-hosted JSON API), Brave Search and
Tavily (public HTTP APIs). ``provider_for(settings)`` picks the configured one, or None.

The provider's URL is the operator's (often an intranet SearXNG), so it is not subject to the
private-address rule that guards ``web_extract``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import unescape
from typing import TYPE_CHECKING, Any, Protocol

import httpx

from core.tls import tls_client

if TYPE_CHECKING:
    from core.config import Settings

BRAVE_URL = "https://api.search.brave.com/res/v1"
TAVILY_URL = "https://api.tavily.com"
TIMEOUT = 20.0
_TAGS = re.compile(r"<[^>]{0,200}>")


class SearchFailed(Exception):
    """The provider could not answer; the message says why, for the model and the user."""


@dataclass(frozen=True)
class SearchHit:
    title: str
    url: str
    snippet: str


class SearchProvider(Protocol):
    @property
    def name(self) -> str: ...

    async def search(self, query: str, count: int) -> list[SearchHit]: ...


def _clean(value: Any, limit: int = 500) -> str:
    text = " ".join(unescape(_TAGS.sub("", str(value or ""))).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _hits(items: Any, snippet_key: str, count: int) -> list[SearchHit]:
    if not isinstance(items, list):
        raise SearchFailed("the provider's answer has no result list")
    hits = []
    for item in items:
        if isinstance(item, dict) and item.get("url"):
            hits.append(SearchHit(title=_clean(item.get("title"), 200), url=str(item["url"]),
                                  snippet=_clean(item.get(snippet_key))))
        if len(hits) >= count:
            break
    return hits


async def _request(name: str, method: str, url: str, **kwargs: Any) -> Any:
    try:
        async with tls_client(timeout=TIMEOUT, trust_env=False) as client:
            response = await client.request(method, url, **kwargs)
    except httpx.HTTPError as exc:
        raise SearchFailed(f"{name} did not answer: {type(exc).__name__}: {exc}") from None
    if response.status_code in (401, 403):
        raise SearchFailed(f"{name} refused the request (HTTP {response.status_code}): check "
                           "IRIS_WEB_SEARCH_API_KEY")
    if response.status_code == 429:
        raise SearchFailed(f"{name} says too many requests (HTTP 429); try again later")
    if response.status_code >= 400:
        raise SearchFailed(f"{name} answered HTTP {response.status_code}")
    try:
        return response.json()
    except ValueError:
        raise SearchFailed(f"{name} did not answer with JSON (is format=json enabled?)") from None


@dataclass(frozen=True)
class SearXNG:
    base_url: str
    name: str = "SearXNG"

    async def search(self, query: str, count: int) -> list[SearchHit]:
        data = await _request(self.name, "GET", f"{self.base_url.rstrip('/')}/search",
                              params={"q": query, "format": "json"})
        return _hits(data.get("results") if isinstance(data, dict) else None, "content", count)


@dataclass(frozen=True)
class Brave:
    api_key: str
    base_url: str = BRAVE_URL
    name: str = "Brave Search"

    async def search(self, query: str, count: int) -> list[SearchHit]:
        data = await _request(
            self.name, "GET", f"{self.base_url.rstrip('/')}/web/search",
            params={"q": query, "count": count},
            headers={"Accept": "application/json", "X-Subscription-Token": self.api_key},
        )
        web = data.get("web") if isinstance(data, dict) else None
        if web is None and isinstance(data, dict) and "query" in data:
            return []  # Brave leaves out the web section when nothing matched
        return _hits(web.get("results") if isinstance(web, dict) else None, "description",
                     count)


@dataclass(frozen=True)
class Tavily:
    api_key: str
    base_url: str = TAVILY_URL
    name: str = "Tavily"

    async def search(self, query: str, count: int) -> list[SearchHit]:
        data = await _request(
            self.name, "POST", f"{self.base_url.rstrip('/')}/search",
            json={"query": query, "max_results": count, "search_depth": "basic"},
            headers={"Authorization": f"Bearer {self.api_key}"},
        )
        return _hits(data.get("results") if isinstance(data, dict) else None, "content", count)


def problem(settings: Settings) -> str | None:
    """What keeps web search off, with the settings that turn it on; None when it is on."""
    provider = settings.web_search_provider
    if provider is None:
        return ("no search provider: set IRIS_WEB_SEARCH_PROVIDER=searxng with "
                "IRIS_WEB_SEARCH_URL=<your SearXNG>, or brave or tavily with "
                "IRIS_WEB_SEARCH_API_KEY")
    if provider == "searxng" and not settings.web_search_url:
        return "searxng needs IRIS_WEB_SEARCH_URL (its base URL, with format=json enabled)"
    if provider in ("brave", "tavily") and settings.web_search_api_key is None:
        return f"{provider} needs IRIS_WEB_SEARCH_API_KEY"
    return None


def provider_for(settings: Settings) -> SearchProvider | None:
    if problem(settings) is not None:
        return None
    key = settings.secret("web_search_api_key") or ""
    if settings.web_search_provider == "searxng":
        return SearXNG(base_url=settings.web_search_url or "")
    if settings.web_search_provider == "brave":
        return Brave(api_key=key, base_url=settings.web_search_url or BRAVE_URL)
    return Tavily(api_key=key, base_url=settings.web_search_url or TAVILY_URL)
