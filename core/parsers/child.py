"""The parsing child: reads one document on stdin and writes its text as framed pieces.

Run by ``core.parsers.runner`` as ``python -I child.py --cpu S --memory BYTES --parent PID``;
it imports nothing of Iris (``-I`` ignores PYTHONPATH), only the standard library and, lazily,
the parser the document needs (pypdf, trafilatura/lxml), so those never enter the server.

Before reading anything it dies with its parent (``PR_SET_PDEATHSIG``) and limits itself:
``RLIMIT_CPU`` (the kernel ends it with SIGXCPU) and ``RLIMIT_AS`` (allocations past it raise
``MemoryError``, reported as a ``C`` frame or exit status 3). The parent bounds wall time and
output size and kills it past them.

stdin: one JSON line ``{"kind": "pdf"|"html"|"mail", "max_pages": N, "url": U, "charset": C}``,
then the document's bytes. stdout: frames of one kind byte, a 4-byte big-endian length and a
payload: ``M`` JSON facts (``pages``, ``title``, the ``page`` being read), ``P`` a piece of
text (UTF-8), ``R`` the document was refused (UTF-8 reason), ``C`` the child cut itself
(``memory``), ``D`` done.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import io
import json
import os
import re
import resource
import signal
import struct
import sys
from collections.abc import Iterator
from html import unescape
from typing import BinaryIO

PIECE = 256 * 1024  # characters per P frame at most
MAX_FRAME = 4 * PIECE + 64  # bytes: the parent refuses larger frames
HEADER = struct.Struct(">cI")
MEMORY_EXIT = 3
PR_SET_PDEATHSIG = 1
SKIP = frozenset({"script", "style", "noscript", "template", "svg", "nav", "header", "footer",
                  "aside", "form", "iframe", "head"})
BLOCK = frozenset({"p", "div", "section", "article", "main", "br", "li", "tr", "h1", "h2", "h3",
                   "h4", "h5", "h6", "pre", "blockquote", "table", "ul", "ol", "dd", "dt"})
MAIL_SKIP = frozenset({"script", "style", "blockquote"})
MAIL_BLOCK = frozenset({"br", "p", "div", "li", "tr"})
_TITLE_OPEN = re.compile(r"<title\b[^>]{0,500}>", re.IGNORECASE)
_TITLE_CLOSE = re.compile(r"</title\s*>", re.IGNORECASE)


class Refused(Exception):
    """The document cannot be read (not a PDF, encrypted): said to the user as it is."""


def die_with_parent(parent: int) -> None:
    with contextlib.suppress(OSError, AttributeError):  # not Linux: kill and RLIMIT_CPU remain
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def limit(cpu_seconds: int, memory_bytes: int) -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 2))
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))


def frame(out: BinaryIO, kind: bytes, payload: bytes = b"") -> None:
    out.write(HEADER.pack(kind, len(payload)) + payload)
    out.flush()


def pieces(text: str) -> Iterator[bytes]:
    for start in range(0, len(text), PIECE):
        yield text[start:start + PIECE].encode("utf-8", errors="replace")


def decode(body: bytes, charset: str | None) -> str:
    for encoding in (charset, "utf-8"):
        if encoding:
            try:
                return body.decode(encoding)
            except (LookupError, UnicodeDecodeError):
                continue
    return body.decode("utf-8", errors="replace")


def pdf_pages(body: bytes, max_pages: int, out: BinaryIO) -> None:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(body))
        if reader.is_encrypted and not reader.decrypt(""):
            raise Refused("the PDF is encrypted")
        total = len(reader.pages)
        frame(out, b"M", json.dumps({"pages": total}).encode())
        for number in range(1, min(total, max_pages) + 1):
            frame(out, b"M", json.dumps({"page": number}).encode())
            text = (reader.pages[number - 1].extract_text() or "").strip()
            lead = "" if number == 1 else "\n\n"
            for piece in pieces(f"{lead}--- page {number} ---\n{text}"):
                frame(out, b"P", piece)
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, IndexError,
            RecursionError) as exc:
        raise Refused(f"not a readable PDF: {exc}") from None
    if total > max_pages:
        frame(out, b"P", f"\n\n[… {total - max_pages} more pages not read]".encode())


def html_title(html: str) -> str:
    opened = _TITLE_OPEN.search(html, 0, 200_000)
    if not opened:
        return ""
    closed = _TITLE_CLOSE.search(html, opened.end(), opened.end() + 5_000)
    end = closed.start() if closed else opened.end()
    return " ".join(unescape(html[opened.end():end]).split())[:300]


def visible_text(html: str, skip: frozenset[str], block: frozenset[str], *,
                 block_ends: bool = True) -> str:
    """Visible text of ``html`` in one linear pass over lxml's tree (no recursion)."""
    from lxml import etree
    from lxml import html as lxml_html

    try:
        root = lxml_html.document_fromstring(html)
    except (etree.ParserError, ValueError):
        return ""
    parts: list[str] = []
    hidden = 0
    for event, element in etree.iterwalk(root, events=("start", "end")):
        tag = element.tag if isinstance(element.tag, str) else ""
        if event == "start":
            if tag in skip:
                hidden += 1
            elif not hidden:
                if tag in block:
                    parts.append("\n")
                if element.text and isinstance(element.tag, str):
                    parts.append(element.text)
            continue
        if tag in skip:
            hidden -= 1
        elif not hidden and block_ends and tag in block:
            parts.append("\n")
        if not hidden and element.tail:
            parts.append(element.tail)
    return "".join(parts)


def page_text(html: str, url: str | None) -> str:
    import trafilatura

    extracted = trafilatura.extract(
        html, url=url, output_format="markdown", include_comments=False, include_tables=True,
        include_links=False, include_images=False, favor_recall=True,
    )
    if extracted and extracted.strip():
        return str(extracted)
    return tidy(visible_text(html, SKIP, BLOCK))


def tidy(text: str) -> str:
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def mail_text(html: str) -> str:
    text = visible_text(html, MAIL_SKIP, MAIL_BLOCK, block_ends=False)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def serve(request: dict[str, object], body: bytes, out: BinaryIO) -> None:
    kind = request.get("kind")
    if kind == "pdf":
        max_pages = request.get("max_pages")
        pdf_pages(body, max_pages if isinstance(max_pages, int) else 300, out)
        return
    charset = request.get("charset")
    html = decode(body, charset if isinstance(charset, str) else None)
    if kind == "html":
        frame(out, b"M", json.dumps({"title": html_title(html)}).encode())
        url = request.get("url")
        text = page_text(html, url if isinstance(url, str) else None)
    elif kind == "mail":
        text = mail_text(html)
    else:
        raise Refused(f"unknown kind {kind!r}")
    for piece in pieces(text):
        frame(out, b"P", piece)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cpu", type=int, required=True)
    parser.add_argument("--memory", type=int, required=True)
    parser.add_argument("--parent", type=int, required=True)
    args = parser.parse_args()
    die_with_parent(args.parent)
    limit(args.cpu, args.memory)
    out = sys.stdout.buffer
    try:
        request = json.loads(sys.stdin.buffer.readline())
        serve(request, sys.stdin.buffer.read(), out)
    except Refused as exc:
        frame(out, b"R", str(exc).encode("utf-8", errors="replace"))
    except MemoryError:
        try:
            frame(out, b"C", b"memory")
        finally:
            os._exit(MEMORY_EXIT)
    frame(out, b"D")


if __name__ == "__main__":
    main()
