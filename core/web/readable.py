"""A fetched page as readable text: the main text of HTML as Markdown, PDFs page by page, text
as it is. HTML and PDFs are read by ``core.parsers`` in a child process within the parse limits;
a page whose reading was cut keeps what was read and says so in ``Page.cut``."""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.parsers.runner import ParseLimits, ParserCrashed, ParseRefused, parse
from core.web.fetch import Fetched, FetchFailed

MAX_PDF_PAGES = 300


@dataclass(frozen=True)
class Page:
    url: str
    title: str
    text: str
    kind: str  # html, pdf, text
    total_chars: int  # before the cap
    truncated_bytes: bool  # the download hit the byte cap
    cut: str = ""  # why the reading stopped early, for the user; "" when it did not


def decode(fetched: Fetched) -> str:
    for encoding in (fetched.charset, "utf-8"):
        if encoding:
            try:
                return fetched.body.decode(encoding)
            except (LookupError, UnicodeDecodeError):
                continue
    return fetched.body.decode("utf-8", errors="replace")


async def readable(fetched: Fetched, max_chars: int, *, user_id: str,
                   limits: ParseLimits) -> Page:
    """``fetched`` as text, or ``FetchFailed`` when it cannot be read."""
    title, cut = "", ""
    if fetched.content_type == "application/pdf":
        if fetched.truncated:
            raise FetchFailed("the PDF is larger than the byte cap (web_max_bytes)")
        kind = "pdf"
    elif fetched.content_type in ("text/html", "application/xhtml+xml"):
        kind = "html"
    else:
        kind = "text"
    if kind == "text":
        text = decode(fetched)
    else:
        try:
            parsed = await parse("pdf" if kind == "pdf" else "html", fetched.body,
                                 user_id=user_id, limits=limits, max_pages=MAX_PDF_PAGES,
                                 url=fetched.url, charset=fetched.charset)
        except ParseRefused as exc:
            raise FetchFailed(str(exc)) from None
        except ParserCrashed as exc:
            raise FetchFailed(f"the {kind.upper()} could not be read: {exc}") from None
        title, text, cut = parsed.title, parsed.text, parsed.cut_note("page")
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    total = len(text)
    if total > max_chars:
        text = f"{text[:max_chars]}\n[… {total - max_chars} more characters not shown]"
    return Page(url=fetched.url, title=title, text=text, kind=kind, total_chars=total,
                truncated_bytes=fetched.truncated, cut=cut)
