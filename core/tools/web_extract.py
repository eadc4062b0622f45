"""``web_extract``: read web pages and PDFs as text, refusing private and local addresses."""

from __future__ import annotations

import asyncio
import logging

from pydantic import BaseModel, Field

from core.addresses import AddressRefused
from core.contracts.toolkit import Tool, ToolContext
from core.parsers.runner import ParseLimits
from core.web.fetch import FetchFailed, FetchPolicy, Resolver, fetch, system_resolver
from core.web.readable import Page, readable

MAX_URLS = 5
log = logging.getLogger(__name__)


class WebExtractArgs(BaseModel):
    urls: list[str] = Field(min_length=1, max_length=MAX_URLS)
    max_chars: int | None = Field(default=None, ge=200, description="Text cap per URL.")


class WebExtract(Tool):
    name = "web_extract"
    description = "Read web pages or PDFs by URL; returns their main text as Markdown."
    Args = WebExtractArgs
    untrusted_output = True

    def __init__(self, resolver: Resolver = system_resolver) -> None:
        self.resolver = resolver

    async def run(self, ctx: ToolContext, args: WebExtractArgs) -> str:
        policy = FetchPolicy.from_settings(ctx.settings)
        cap = min(args.max_chars or ctx.settings.web_extract_chars,
                  ctx.settings.web_extract_chars)
        cap = min(cap, ctx.settings.max_tool_output_chars // len(args.urls))
        limits = ParseLimits.from_settings(ctx.settings)
        sections = await asyncio.gather(*(self._one(url, policy, cap, ctx.user_id, limits)
                                          for url in args.urls))
        return "\n\n".join(sections)

    async def _one(self, url: str, policy: FetchPolicy, cap: int, user_id: str,
                   limits: ParseLimits) -> str:
        try:
            fetched = await fetch(url, policy, resolver=self.resolver)
            page = await readable(fetched, cap, user_id=user_id, limits=limits)
        except AddressRefused as exc:
            return f"## {url}\nRefused: {exc}. Iris does not fetch local or private addresses."
        except FetchFailed as exc:
            return f"## {url}\nError: {exc}"
        except Exception:  # one URL's surprise must not cost the batch the others' text
            log.exception("web_extract failed on %r", url)
            return f"## {url}\nError: this URL could not be read (an internal error, logged)"
        return _section(url, page)


def _section(asked: str, page: Page) -> str:
    head = f"## {page.title or page.url}\nURL: {page.url}"
    if page.url != asked:
        head += f" (redirected from {asked})"
    notes = [f"{page.kind}, {page.total_chars} characters"]
    if page.truncated_bytes:
        notes.append("download cut at the byte cap")
    body = page.text or "(no readable text)"
    if page.cut:
        body = f"{body}\n\n{page.cut}"
    return f"{head}\n({'; '.join(notes)})\n\n{body}"
