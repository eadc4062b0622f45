"""Fake web servers for the web tools' tests: a site (articles, PDFs, redirects, oversize and
binary answers) and search providers answering in SearXNG's, Brave's and Tavily's real shapes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

ARTICLE = """<!doctype html>
<html><head><title>Tides of the North Sea</title>
<script>window.secret = "SCRIPT-NOT-TEXT";</script><style>.x{color:red}</style></head>
<body>
<nav><a href="/">Home</a> <a href="/about">NAV-LINK-NOT-TEXT</a></nav>
<main><article>
<h1>Tides of the North Sea</h1>
<p>The North Sea has two high tides a day, driven by the Moon and shaped by the coastline.
Around the Wash the range reaches seven metres, while near the amphidromic points it is
almost nothing at all.</p>
<p>Fishermen along the Frisian coast still plan their days by the tide tables printed in the
harbour offices, and the mudflats that appear at low water are walked by thousands of
visitors every summer.</p>
<p>Storm surges are the danger: when a northwesterly gale piles water into the narrowing
southern basin at high tide, the sea can stand two or three metres above the forecast.</p>
</article></main>
<footer>FOOTER-NOT-TEXT copyright</footer>
</body></html>
"""


def make_pdf(lines: list[str]) -> bytes:
    """A small valid PDF with one page of Helvetica text (written by hand, offsets computed)."""
    text = "BT /F1 14 Tf 72 720 Td 18 TL " + " ".join(
        "(" + line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ") '"
        for line in lines) + " ET"
    stream = text.encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream
        + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += (f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n"
            "%%EOF\n").encode()
    return bytes(out)


@dataclass
class FakeSite:
    """A web site on loopback; ``hits`` records (path, Host header) of every request."""

    hits: list[tuple[str, str]] = field(default_factory=list)
    app: FastAPI = field(init=False)

    def __post_init__(self) -> None:
        app = FastAPI()

        @app.middleware("http")
        async def record(request: Request, call_next: Any) -> Any:
            self.hits.append((request.url.path, request.headers.get("host", "")))
            return await call_next(request)

        @app.get("/article")
        async def article() -> Response:
            return Response(ARTICLE, media_type="text/html; charset=utf-8")

        @app.get("/notes.txt")
        async def notes() -> Response:
            return Response("plain notes\nline two\n", media_type="text/plain")

        @app.get("/report.pdf")
        async def report() -> Response:
            pdf = make_pdf(["Quarterly report", "Revenue grew by 12 percent."])
            return Response(pdf, media_type="application/pdf")

        @app.get("/photo.png")
        async def photo() -> Response:
            return Response(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, media_type="image/png")

        @app.get("/endless")
        async def endless() -> StreamingResponse:
            def chunks() -> Iterator[bytes]:
                for _ in range(10_000):
                    yield b"<p>" + b"word " * 2000 + b"</p>\n"
            return StreamingResponse(chunks(), media_type="text/html")

        @app.get("/redirect")
        async def redirect(to: str, status: int = 302) -> Response:
            return Response(status_code=status, headers={"Location": to})

        @app.get("/loop/{n}")
        async def loop(n: int) -> Response:
            return Response(status_code=302, headers={"Location": f"/loop/{n + 1}"})

        @app.get("/missing")
        async def missing() -> Response:
            return Response("gone", status_code=404)

        self.app = app


SEARCH_RESULTS = [
    ("Tide tables for the Wash", "https://tides.example/wash",
     "High water at <strong>King's Lynn</strong> is at 06:12 &amp; 18:40 today."),
    ("North Sea storm surges", "https://weather.example/surges",
     "Storm surges raise the sea two or three metres above the forecast."),
    ("Mudflat walking", "https://travel.example/wadden", "Walk the Wadden Sea at low tide."),
]


@dataclass
class FakeSearch:
    """SearXNG (``/search``), Brave (``/res/v1/web/search``) and Tavily (``POST /search``)
    in their real response shapes; ``requests`` records what each received."""

    api_key: str = "key-123"
    requests: list[dict[str, Any]] = field(default_factory=list)
    app: FastAPI = field(init=False)

    def __post_init__(self) -> None:
        app = FastAPI()

        @app.get("/search")
        async def searxng(request: Request) -> Response:
            params = dict(request.query_params)
            self.requests.append({"provider": "searxng", "params": params})
            if params.get("format") != "json":  # SearXNG refuses formats not enabled
                return Response("Forbidden", status_code=403)
            return JSONResponse({
                "query": params.get("q", ""), "number_of_results": 0,
                "results": [
                    {"url": url, "title": title, "content": content, "engine": "duckduckgo",
                     "parsed_url": ["https", url.split("/")[2], "/" + url.split("/", 3)[3],
                                    "", "", ""],
                     "template": "default.html", "engines": ["duckduckgo", "brave"],
                     "positions": [i + 1], "score": 2.0 / (i + 1), "category": "general"}
                    for i, (title, url, content) in enumerate(SEARCH_RESULTS)
                ],
                "answers": [], "corrections": [], "infoboxes": [], "suggestions": ["tides"],
                "unresponsive_engines": [],
            })

        @app.get("/res/v1/web/search")
        async def brave(request: Request) -> Response:
            params = dict(request.query_params)
            token = request.headers.get("x-subscription-token")
            self.requests.append({"provider": "brave", "params": params, "token": token})
            if token != self.api_key:
                return JSONResponse(status_code=401, content={
                    "type": "ErrorResponse", "error": {
                        "id": "c0d3", "status": 401, "code": "SUBSCRIPTION_TOKEN_INVALID",
                        "detail": "The provided subscription token is invalid."}})
            count = int(params.get("count", 20))
            return JSONResponse({
                "type": "search",
                "query": {"original": params.get("q", ""), "show_strict_warning": False,
                          "is_navigational": False, "spellcheck_off": True, "country": "us"},
                "mixed": {"type": "mixed", "main": [{"type": "web", "index": 0, "all": False}]},
                "web": {"type": "search", "family_friendly": True, "results": [
                    {"type": "search_result", "subtype": "generic", "title": title,
                     "url": url, "description": content, "is_source_local": False,
                     "language": "en", "family_friendly": True,
                     "meta_url": {"scheme": "https", "netloc": url.split("/")[2],
                                  "hostname": url.split("/")[2], "path": ""},
                     "age": "2 days ago"}
                    for title, url, content in SEARCH_RESULTS[:count]
                ]},
            })

        @app.post("/search")
        async def tavily(request: Request) -> Response:
            body = await request.json()
            auth = request.headers.get("authorization", "")
            self.requests.append({"provider": "tavily", "body": body, "auth": auth})
            if auth != f"Bearer {self.api_key}":
                return JSONResponse(status_code=401, content={
                    "detail": {"error": "Unauthorized: missing or invalid API key."}})
            count = int(body.get("max_results", 5))
            return JSONResponse({
                "query": body.get("query"), "follow_up_questions": None, "answer": None,
                "images": [],
                "results": [
                    {"title": title, "url": url, "content": content, "score": 0.9 - i / 10,
                     "raw_content": None}
                    for i, (title, url, content) in enumerate(SEARCH_RESULTS[:count])
                ],
                "response_time": 1.21, "request_id": "a7f2d0de-1c3a-4b7e-9e5d-1f2c3b4a5d6e",
            })

        self.app = app
