"""A fetched page as readable text: the main text of HTML as Markdown (trafilatura, with a
small fallback of our own for pages it finds nothing in), PDFs page by page (pypdf), text
as it is. CPU-bound: callers run it off the event loop."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from html import unescape
from html.parser import HTMLParser

from core.web.fetch import Fetched, FetchFailed

MAX_PDF_PAGES = 300
_TITLE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)
_SKIP = frozenset({"script", "style", "noscript", "template", "svg", "nav", "header", "footer",
                   "aside", "form", "iframe", "head"})
_BLOCK = frozenset({"p", "div", "section", "article", "main", "br", "li", "tr", "h1", "h2", "h3",
                    "h4", "h5", "h6", "pre", "blockquote", "table", "ul", "ol", "dd", "dt"})


@dataclass(frozen=True)
class Page:
    url: str
    title: str
    text: str
    kind: str  # html, pdf, text
    total_chars: int  # before the cap
    truncated_bytes: bool  # the download hit the byte cap


def decode(fetched: Fetched) -> str:
    for encoding in (fetched.charset, "utf-8"):
        if encoding:
            try:
                return fetched.body.decode(encoding)
            except (LookupError, UnicodeDecodeError):
                continue
    return fetched.body.decode("utf-8", errors="replace")


def readable(fetched: Fetched, max_chars: int) -> Page:
    if fetched.content_type == "application/pdf":
        title, text, kind = "", pdf_text(fetched), "pdf"
    elif fetched.content_type in ("text/html", "application/xhtml+xml"):
        html = decode(fetched)
        title, text, kind = html_title(html), html_text(html, fetched.url), "html"
    else:
        title, text, kind = "", decode(fetched), "text"
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    total = len(text)
    if total > max_chars:
        text = f"{text[:max_chars]}\n[… {total - max_chars} more characters not shown]"
    return Page(url=fetched.url, title=title, text=text, kind=kind, total_chars=total,
                truncated_bytes=fetched.truncated)


def html_title(html: str) -> str:
    match = _TITLE.search(html[:200_000])
    return " ".join(unescape(match[1]).split())[:300] if match else ""


def html_text(html: str, url: str) -> str:
    import trafilatura

    extracted = trafilatura.extract(
        html, url=url, output_format="markdown", include_comments=False, include_tables=True,
        include_links=False, include_images=False, favor_recall=True,
    )
    if extracted and extracted.strip():
        return str(extracted)
    return plain_text(html)


class _TextParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag in _SKIP:
            self.skipping += 1
        elif tag in _BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self.skipping = max(0, self.skipping - 1)
        elif tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)


def plain_text(html: str) -> str:
    """Visible text without scripts, styles or navigation: the fallback extractor."""
    parser = _TextParser()
    parser.feed(html)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).splitlines())
    return "\n".join(line for line in lines if line)


def pdf_text(fetched: Fetched) -> str:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    if fetched.truncated:
        raise FetchFailed("the PDF is larger than the byte cap (web_max_bytes)")
    try:
        reader = PdfReader(io.BytesIO(fetched.body))
        if reader.is_encrypted and not reader.decrypt(""):
            raise FetchFailed("the PDF is encrypted")
        pages = []
        for number, page in enumerate(reader.pages[:MAX_PDF_PAGES], start=1):
            pages.append(f"--- page {number} ---\n{(page.extract_text() or '').strip()}")
    except (PdfReadError, ValueError, KeyError, TypeError) as exc:
        raise FetchFailed(f"not a readable PDF: {exc}") from None
    if len(reader.pages) > MAX_PDF_PAGES:
        pages.append(f"[… {len(reader.pages) - MAX_PDF_PAGES} more pages not read]")
    return "\n\n".join(pages)
