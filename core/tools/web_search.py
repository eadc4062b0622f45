"""``web_search``: search the web through the configured provider (SearXNG, Brave, Tavily)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from core.contracts.toolkit import Tool, ToolContext
from core.errors import ToolRetry
from core.web.search import SearchFailed, provider_for

if TYPE_CHECKING:
    from core.config import Settings


class WebSearchArgs(BaseModel):
    query: str = Field(min_length=1, max_length=400)
    count: int | None = Field(default=None, ge=1, le=20, description="Results wanted.")


class WebSearch(Tool):
    name = "web_search"
    description = "Search the web. Returns title, URL and snippet per result."
    Args = WebSearchArgs
    untrusted_output = True

    def offered(self, settings: Settings) -> bool:
        return provider_for(settings) is not None

    async def run(self, ctx: ToolContext, args: WebSearchArgs) -> str:
        provider = provider_for(ctx.settings)
        if provider is None:
            raise ToolRetry("web search is not configured here")
        count = args.count or ctx.settings.web_search_results
        try:
            hits = await provider.search(args.query.strip(), count)
        except SearchFailed as exc:
            raise ToolRetry(str(exc)) from None
        if not hits:
            return f"No results for {args.query!r}."
        lines = [f"{len(hits)} results for {args.query!r} ({provider.name}):"]
        for number, hit in enumerate(hits, start=1):
            lines.append(f"{number}. {hit.title or '(no title)'}\n   {hit.url}\n   {hit.snippet}")
        return "\n".join(lines)
