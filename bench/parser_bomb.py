"""Hostile documents, before and after the parsing child (issue 28, item 4).

- before: pypdf in the server process on the PDF content bomb (300 pages sharing one 2 MB
  FlateDecode stream of text operators): CPU seconds for the first pages, and the whole
  document extrapolated from them;
- after: the same bomb through ``core.parsers.parse`` with the default limits: wall time until
  it is cut, and how many pages were read;
- the cost of the child on ordinary documents: a one-page PDF and a small article, in a child
  (spawn + import + parse) against in-process.

    .venv/bin/python bench/parser_bomb.py [--pages 2] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.parsers.runner import ParseLimits, parse
from iris_testing.hostile_documents import pdf_bomb
from iris_testing.web_fakes import ARTICLE, make_pdf


def in_process_pdf(data: bytes, pages: int) -> float:
    from pypdf import PdfReader

    start = time.process_time()
    reader = PdfReader(io.BytesIO(data))
    for page in reader.pages[:pages]:
        page.extract_text()
    return time.process_time() - start


def in_process_html(html: str) -> float:
    import trafilatura

    start = time.perf_counter()
    trafilatura.extract(html, output_format="markdown", favor_recall=True)
    return time.perf_counter() - start


async def in_child(kind: str, data: bytes, limits: ParseLimits) -> tuple[float, object]:
    start = time.perf_counter()
    parsed = await parse(kind, data, user_id="bench", limits=limits)  # type: ignore[arg-type]
    return time.perf_counter() - start, parsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=2, help="bomb pages timed in-process")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    bomb, limits = pdf_bomb(), ParseLimits()
    per_page = in_process_pdf(bomb, args.pages) / args.pages
    print(f"bomb: {len(bomb) / 1024:.0f} KB, 300 pages")
    print(f"before (pypdf in the server): {per_page:.1f} CPU s per page, "
          f"~{per_page * 300 / 60:.0f} CPU min for the document")
    took, parsed = asyncio.run(in_child("pdf", bomb, limits))
    print(f"after (child, defaults {limits.wall_seconds:g} s wall / {limits.cpu_seconds} s CPU /"
          f" {limits.memory_mb} MB): {took:.1f} s, cut={parsed.cut}, "  # type: ignore[attr-defined]
          f"{parsed.pages_read} pages read")  # type: ignore[attr-defined]
    small_pdf = make_pdf(["Quarterly report", "Revenue grew by 12 percent."])
    in_process_pdf(small_pdf, 1)  # imports pypdf once, as a warm server would have
    in_process_html(ARTICLE)
    rows = [
        ("one-page PDF", [in_process_pdf(small_pdf, 1) for _ in range(args.runs)],
         [asyncio.run(in_child("pdf", small_pdf, limits))[0] for _ in range(args.runs)]),
        ("article (HTML)", [in_process_html(ARTICLE) for _ in range(args.runs)],
         [asyncio.run(in_child("html", ARTICLE.encode(), limits))[0] for _ in range(args.runs)]),
    ]
    for name, before, after in rows:
        print(f"{name}: in-process median {statistics.median(before) * 1000:.0f} ms, "
              f"in a child median {statistics.median(after) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
