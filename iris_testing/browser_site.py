"""A web site for the browser tools' tests, served on loopback: a page drawn by JavaScript, a
"load more" list, a form, a sign-in that sets a cookie, redirects and subresources toward other
addresses, and a page that does not answer until the test lets it. ``hits`` records (path,
cookie header)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from iris_testing.server import RunningServer, serve

JS_PAGE = """<!doctype html><html><head><title>Tide tables</title></head><body>
<h1>Tide tables</h1><div id="out">Loading…</div>
<script>
fetch('/data.json').then(r => r.json()).then(d => {
  document.getElementById('out').textContent = 'High water at ' + d.high;
  console.log('tides drawn');
});
</script></body></html>"""

FORM_PAGE = """<!doctype html><html><head><title>Greeter</title></head><body>
<form action="/hello" method="get">
<label for="n">Your name</label><input id="n" name="name">
<button type="submit">Greet me</button></form></body></html>"""

LOGIN_PAGE = """<!doctype html><html><head><title>Sign in</title></head><body>
<form action="/login" method="post">
<input name="user" aria-label="User name"><input type="password" name="pw" aria-label="Password">
<button type="submit">Sign in</button></form></body></html>"""

# "Load more" fetches the next items and adds them to the page, then hides itself: what it
# shows exists only in this page's life, as on a real feed or search result page.
MORE_PAGE = """<!doctype html><html><head><title>Harbour notices</title></head><body>
<h1>Harbour notices</h1><button id="more" onclick="loadMore()">Load more</button>
<ul id="list"><li>Notice 1: dredging at berth 4</li></ul>
<script>
function loadMore() {
  fetch('/more.json').then(r => r.json()).then(items => {
    for (const it of items) {
      const li = document.createElement('li'), a = document.createElement('a');
      a.href = it.href; a.textContent = it.text; li.appendChild(a);
      document.getElementById('list').appendChild(li);
    }
    document.getElementById('more').style.display = 'none';
  });
}
</script></body></html>"""

SOCKET_PAGE = """<!doctype html><html><head><title>Socket</title></head><body>
<p id="out">socket waiting</p><script>
const ws = new WebSocket(TARGET), out = document.getElementById('out');
ws.onmessage = e => { out.textContent = 'socket said ' + e.data; };
ws.onerror = () => { out.textContent = 'socket failed'; };
</script></body></html>"""


@dataclass
class BrowserSite:
    """``elsewhere`` is the address of a page the site links to as a subresource and redirect
    target (a host the browser must refuse)."""

    elsewhere: str = "http://169.254.169.254/latest/meta-data/"
    hits: list[tuple[str, str]] = field(default_factory=list)
    released: threading.Event = field(default_factory=threading.Event)
    app: FastAPI = field(init=False)

    def __post_init__(self) -> None:
        app = FastAPI()

        @app.middleware("http")
        async def record(request: Request, call_next: Any) -> Any:
            self.hits.append((request.url.path, request.headers.get("cookie", "")))
            return await call_next(request)

        @app.get("/js")
        async def js() -> Response:
            return HTMLResponse(JS_PAGE)

        @app.get("/data.json")
        async def data() -> dict[str, str]:
            return {"high": "07:12 at Wash Point"}

        @app.get("/more")
        async def more() -> Response:
            return HTMLResponse(MORE_PAGE)

        @app.get("/more.json")
        async def more_items() -> list[dict[str, str]]:
            return [{"text": f"Notice {n}: {what}", "href": f"/notice/{n}"}
                    for n, what in ((2, "pilot boarding moved"), (3, "fog signal testing"))]

        @app.get("/notice/{n}")
        async def notice(n: int) -> Response:
            return HTMLResponse(f"<title>Notice {n}</title><p>The full text of notice {n}.</p>")

        @app.get("/form")
        async def form() -> Response:
            return HTMLResponse(FORM_PAGE)

        @app.get("/hello")
        async def hello(name: str = "") -> Response:
            return HTMLResponse(f"<title>Hello</title><p>Good morning, {name[:50]}!</p>")

        @app.get("/signin")
        async def signin() -> Response:
            return HTMLResponse(LOGIN_PAGE)

        @app.post("/login")
        async def login(user: str = Form(...), pw: str = Form(...)) -> Response:
            answer = RedirectResponse("/account", status_code=303)
            if pw == "hunter2":
                answer.set_cookie("session", f"user-{user[:20]}", max_age=3600)
            return answer

        @app.get("/account")
        async def account(request: Request) -> Response:
            who = request.cookies.get("session", "")
            text = f"Signed in as {who[5:]}" if who.startswith("user-") else "Not signed in"
            return HTMLResponse(f"<title>Account</title><p>{text}</p>")

        @app.get("/bounce")
        async def bounce() -> Response:
            return RedirectResponse(self.elsewhere, status_code=302)

        @app.get("/embeds")
        async def embeds() -> Response:
            return HTMLResponse(
                f"<title>Embeds</title><p>Pictures</p>"
                f'<img src="{self.elsewhere}pixel.png" alt="pixel">'
            )

        @app.get("/socket")
        async def socket_page(to: str) -> Response:
            return HTMLResponse(SOCKET_PAGE.replace("TARGET", json.dumps(to)))

        @app.get("/file")
        async def download(size: int = 100, name: str = "report.csv") -> Response:
            body = bytes(i % 251 for i in range(min(size, 10_000_000)))
            disposition = f'attachment; filename="{name[:200]}"'
            return Response(
                body,
                media_type="application/octet-stream",
                headers={"Content-Disposition": disposition},
            )

        @app.get("/hog")
        async def hog() -> Response:
            # memory outside the JavaScript heap, 40 MB a tick, and a request each tick, so the
            # page never falls quiet and an action on it waits (up to its settling cap)
            return HTMLResponse(
                "<title>Hog</title><p>Growing</p><script>const kept = [];"
                "setInterval(() => { const b = new Uint8Array(40 * 1024 * 1024); b.fill(1);"
                " kept.push(b); fetch('/data.json'); }, 50);</script>"
            )

        @app.get("/slowlink")
        async def slow_link() -> Response:
            return HTMLResponse('<title>Links</title><a href="/slow">The slow page</a>')

        @app.get("/slow")
        async def slow() -> Response:
            await asyncio.to_thread(self.released.wait)
            return HTMLResponse("<title>Slow</title><p>finally</p>")

        self.app = app

    @contextmanager
    def served(self) -> Iterator[RunningServer]:
        """The site on loopback. A request ``/slow`` still holds is let go before the server
        stops (stopping waits for it), however the block ends."""
        with serve(self.app) as running:
            try:
                yield running
            finally:
                self.released.set()
