"""The browser driver: a standalone script (standard library only) that Iris copies into the
user's workspace and runs INSIDE the user's sandbox.

It starts headless Chromium with the profile kept in the workspace (cookies and storage survive
to the next action, turn and hibernation) and talks the DevTools protocol over
``--remote-debugging-pipe`` (no debugging port). Run plainly (``run``), it performs one action
and Chromium ends with it: it reopens the page of the last action, replays the values typed
there since it loaded, acts and prints one JSON object. Run with ``--serve`` or ``--ask``
(``serving``), one Chromium serves the actions of a whole turn, the page staying open between
them (``perform`` on the same ``Browser``).

Every request the page makes (navigation, redirect hop, subresource) is paused and its scheme
and name checked; every connection Chromium opens (WebSockets included) goes through
``netguard.Guard``, a proxy on loopback for the browser's life, which resolves the host once and
connects only to an address it checked: public, or a host in ``allow``. Input: one JSON object
on stdin (see ``core.browser.session``).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import queue
import sys
import threading
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING or __package__:  # imported as Iris' module (tests, benchmarks)
    from core.browser.downloads import DownloadRefused, Downloads
    from core.browser.links import HostedLink, PipeLink
    from core.browser.netguard import Guard, Refused, check_url
    from core.browser.page_js import SNAPSHOT_JS
else:  # run as a script, beside the modules in session.DRIVER_FILES
    from downloads import DownloadRefused, Downloads
    from links import HostedLink, PipeLink
    from netguard import Guard, Refused, check_url
    from page_js import SNAPSHOT_JS

COOKIE_FIELDS = ("name", "value", "domain", "path", "secure", "httpOnly", "sameSite", "expires")
MAX_COOKIES = 500
Json = dict[str, Any]  # a DevTools message, a command, a state or an answer


class Browser:
    def __init__(self, cmd: Json) -> None:
        self.cmd = cmd
        self.deadline = time.monotonic() + cmd["timeout"]
        self.events: queue.Queue[Json | None] = queue.Queue()
        self.replies: dict[int, Json] = {}
        self.next_id = 0
        self.refused: list[str] = []
        self.guard_refused: list[tuple[str, int, str]] = []  # the proxy's, shown if the page's
        self.page_hosts: set[tuple[str, int]] = set()  # (host, port) the page has asked for
        self.console: list[str] = []
        self.inflight: set[str] = set()
        self.loaded = False
        self.ended = False  # Chromium or the hosted connection is gone
        # The page this browser has open and acted on, when it is the state's page as the last
        # action left it (None: the next action reopens the state's page first).
        self.showing: str | None = None
        self.downloads = Downloads(
            cmd["downloads"],
            cmd["download_max_bytes"],
            cmd["downloads_max"],
            lambda guid: self.send_async("Browser.cancelDownload", session=False, guid=guid),
            self.refused,
        )
        self.hosted = bool(cmd.get("hosted"))
        self.context: str | None = None
        self.session = ""
        self.guard: Guard | None = None
        self.link: HostedLink | PipeLink
        if self.hosted:
            self.link = HostedLink(os.environ["IRIS_BROWSER_CDP_URL"], min(15.0, cmd["timeout"]))
        else:
            self.guard = Guard(cmd["allow"], self.guard_refused, timeout=min(10.0, cmd["timeout"]))
            self.link = PipeLink(cmd, self.guard.port)
        threading.Thread(target=self._read, daemon=True).start()
        try:
            self._attach()
        except BaseException:
            self.close()  # never leave a Chromium behind
            raise

    def _attach(self) -> None:
        if self.hosted:  # a context of its own: nothing shared with other users of the endpoint
            self.context = self.call("Target.createBrowserContext", disposeOnDetach=True)[
                "browserContextId"
            ]
            target_id = self.call(
                "Target.createTarget", url="about:blank", browserContextId=self.context
            )["targetId"]
        else:
            pages = self.call("Target.getTargets")["targetInfos"]
            target_id = next(t["targetId"] for t in pages if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=target_id, flatten=True)[
            "sessionId"
        ]
        for method in ("Page.enable", "Runtime.enable", "Network.enable"):
            self.call(method, session=True)
        self.call("Fetch.enable", session=True, patterns=[{"urlPattern": "*"}])
        if self.hosted:  # its downloads would land on the provider's machine
            self.call("Browser.setDownloadBehavior", behavior="deny", browserContextId=self.context)
        else:
            self.call(
                "Browser.setDownloadBehavior",
                behavior="allowAndName",
                downloadPath=self.downloads.incoming,
                eventsEnabled=True,
            )

    def begin(self, cmd: Json) -> None:
        """Start an action: its own deadline, and what it reports (refused requests, downloads)
        counted afresh. The console is the page's, kept until the next page opens."""
        self.cmd = cmd
        self.deadline = time.monotonic() + cmd["timeout"]
        del self.refused[:]  # shared with the downloads (and the guard's): emptied in place
        del self.guard_refused[:]
        del self.downloads.kept[:]
        self.downloads.seen = 0

    def alive(self) -> bool:
        over = getattr(self.link, "over_kb", 0)
        proc = getattr(self.link, "proc", None)
        return not (self.ended or over or (proc is not None and proc.poll() is not None))

    def _read(self) -> None:
        for text in self.link.messages():
            self.events.put(None if text is None else json.loads(text))

    def call(self, method: str, session: bool = False, **params: Any) -> Json:
        self.next_id += 1
        msg: Json = {"id": self.next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        self.link.send(json.dumps(msg))
        wanted = self.next_id
        while wanted not in self.replies:
            self.pump()
        reply = self.replies.pop(wanted)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error'].get('message')}")
        result: Json = reply.get("result", {})
        return result

    def pump(self, wait: float | None = None) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the browser action ran out of time")
        if getattr(self.link, "over_kb", 0):  # the watchdog killed it: no need to wait
            raise RuntimeError("the browser was stopped for its memory")
        try:
            msg = self.events.get(timeout=min(left, 0.5, wait if wait is not None else left))
        except queue.Empty:
            return
        if msg is None:
            self.ended = True
            raise RuntimeError("the browser ended unexpectedly")
        if "id" in msg:
            self.replies[msg["id"]] = msg
        else:
            self.on_event(msg["method"], msg.get("params", {}))

    def on_event(self, method: str, p: Json) -> None:
        if method == "Fetch.requestPaused":
            url = p["request"]["url"]
            self.asked_for(url)
            try:
                check_url(url, self.cmd["allow"], resolve=self.guard is None)
            except Refused as exc:
                self.refused.append(f"{url[:200]}: {exc}")
                self.send_async(
                    "Fetch.failRequest", requestId=p["requestId"], errorReason="BlockedByClient"
                )
                return
            self.send_async("Fetch.continueRequest", requestId=p["requestId"])
        elif method == "Network.webSocketCreated":  # not paused by Fetch: seen here
            self.asked_for(p["url"])
        elif method == "Network.requestWillBeSent":
            self.inflight.add(p["requestId"])
        elif method in ("Network.loadingFinished", "Network.loadingFailed"):
            self.inflight.discard(p["requestId"])
        elif method == "Browser.downloadWillBegin":
            self.downloads.on_begin(p)
        elif method == "Browser.downloadProgress":
            self.downloads.on_progress(p)
        elif method == "Page.loadEventFired":
            self.loaded = True
        elif method == "Runtime.consoleAPICalled" and len(self.console) < 1000:
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in p["args"])
            self.console.append(f"{p['type']}: {text[:300]}")
        elif method == "Runtime.exceptionThrown" and len(self.console) < 1000:
            d = p["exceptionDetails"]
            text = d.get("exception", {}).get("description", d["text"])
            self.console.append(f"exception: {text[:300]}")

    def asked_for(self, url: str) -> None:
        with contextlib.suppress(ValueError):
            parts = urlsplit(url)
            port = parts.port or {"https": 443, "wss": 443}.get(parts.scheme, 80)
            if parts.hostname and len(self.page_hosts) < 10_000:
                self.page_hosts.add((parts.hostname.lower(), port))

    def refusals(self) -> list[str]:
        """What was refused for this action: by the driver's checks, the downloads' caps, and
        the proxy's for hosts the page asked for."""
        return self.refused + [
            why for host, port, why in self.guard_refused if (host, port) in self.page_hosts
        ]

    def send_async(self, method: str, session: bool = True, **params: Any) -> None:
        self.next_id += 1
        msg: Json = {"id": self.next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        self.link.send(json.dumps(msg))

    def settle(self, quiet: float = 0.4, cap: float = 10.0) -> None:
        """Wait for the load event and then until no request has been in flight for ``quiet``."""
        end = min(self.deadline, time.monotonic() + cap)
        calm_since: float | None = None
        while time.monotonic() < end:
            self.pump(wait=0.05)
            if self.loaded and not self.inflight:
                calm_since = calm_since or time.monotonic()
                if time.monotonic() - calm_since >= quiet:
                    return
            else:
                calm_since = None

    def goto(self, url: str) -> None:
        self.loaded = False
        del self.console[:]  # a new page: its own console
        result = self.call("Page.navigate", session=True, url=url)
        if result.get("errorText"):
            self.settle(quiet=0.3, cap=1.0)
            if self.downloads.seen:  # the address was a file to download, not a page
                return
            raise Refused(f"{url} could not be opened ({result['errorText']})")
        self.settle()

    def finish_downloads(self) -> None:
        """Wait for running downloads (until a second before the deadline); cancel the rest."""
        end = self.deadline - 1.0
        while self.downloads.active and time.monotonic() < end:
            self.pump(wait=0.05)
        self.downloads.stop_unfinished()

    def js(self, expression: str) -> Any:
        r = self.call(
            "Runtime.evaluate",
            session=True,
            expression=expression,
            returnByValue=True,
            awaitPromise=True,
        )
        if "exceptionDetails" in r:
            raise RuntimeError(r["exceptionDetails"].get("text", "script error"))
        return r["result"].get("value")

    def url(self) -> str:
        return str(self.js("location.href"))

    def cookies(self) -> list[Json]:
        """The hosted context's cookies, to keep in the workspace's state until next time."""
        got = self.call("Storage.getCookies", browserContextId=self.context)["cookies"]
        return [
            {k: c[k] for k in COOKIE_FIELDS if k in c and not (k == "expires" and c["session"])}
            for c in got[:MAX_COOKIES]
        ]

    def set_cookies(self, cookies: list[Json] | None) -> None:
        if cookies:
            self.call("Storage.setCookies", cookies=cookies, browserContextId=self.context)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            if self.hosted:
                self.call("Target.disposeBrowserContext", browserContextId=self.context)
            else:
                self.call("Browser.close")
        self.link.close()
        if self.guard is not None:
            self.guard.close()


def find(b: Browser, ref: str) -> str:
    ok = b.js(f"!!document.querySelector('[data-iris-ref=\"{ref}\"]')")
    if not ok:
        raise Refused(f"no element {ref} on this page; take a new snapshot")
    return f"document.querySelector('[data-iris-ref=\"{ref}\"]')"


def fill(b: Browser, ref: str, text: str, allow_password: bool) -> None:
    el = find(b, ref)
    kind = b.js(f"{el}.type || ''")
    if kind == "password" and not allow_password:
        raise Refused("typing into a password field needs the value from the user in this turn")
    b.js(
        f"(() => {{ const e = {el}; e.focus(); e.value = {json.dumps(text)};"
        " e.dispatchEvent(new Event('input', {bubbles: true}));"
        " e.dispatchEvent(new Event('change', {bubbles: true})); })()"
    )


def after_action(b: Browser, state: Json, before: str) -> None:
    b.settle()
    now = b.url()
    if now != before:
        state["history"].append(before)
        state["fills"] = []
    state["url"] = now


def act(b: Browser, cmd: Json, state: Json) -> None:
    action, a = cmd["action"], cmd.get("args", {})
    if action == "navigate":
        check_url(a["url"], cmd["allow"])
        before = state.get("url")
        b.goto(a["url"])
        now = b.url()
        if b.downloads.seen and before and now in ("about:blank", before):
            return  # the address was a download: the page open before stays the open page
        if before:
            state["history"].append(before)
        state["url"], state["fills"] = now, []
        return
    if not state.get("url"):
        raise Refused("no page is open; call browser_navigate first")
    if action == "back":
        if not state["history"]:
            raise Refused("there is no earlier page")
        state["fills"] = []
        b.goto(state["history"].pop())
        state["url"] = b.url()
        return
    if b.showing != state["url"]:  # a browser new to this page: open it as it was left
        b.goto(state["url"])
        b.js(SNAPSHOT_JS)
        for ref, text in state["fills"]:
            with contextlib.suppress(Refused):
                fill(b, ref, text, True)
    before = b.url()
    if action == "click":
        b.js(f"{find(b, a['ref'])}.click()")
        after_action(b, state, before)
    elif action == "type":
        fill(b, a["ref"], a["text"], a.get("allow_password", False))
        state["fills"].append([a["ref"], a["text"]])
        if a.get("submit"):
            el = find(b, a["ref"])
            b.js(f"(() => {{ const e = {el}; if (e.form) e.form.requestSubmit(); }})()")
            after_action(b, state, before)
    elif action == "scroll":
        dy = 800 if a.get("direction", "down") == "down" else -800
        b.js(f"window.scrollBy(0, {dy})")
        b.settle(quiet=0.3, cap=3.0)
    elif action == "press":
        if a.get("ref"):
            b.js(f"{find(b, a['ref'])}.focus()")
        for kind in ("keyDown", "keyUp"):
            b.call(
                "Input.dispatchKeyEvent",
                session=True,
                type=kind,
                key=a["key"],
                code=a["key"],
                windowsVirtualKeyCode=13 if a["key"] == "Enter" else 0,
                text="\r" if a["key"] == "Enter" and kind == "keyDown" else "",
            )
        after_action(b, state, before)


def screenshot(b: Browser, cmd: Json) -> None:
    """The viewport as a JPEG no larger than ``screenshot_max`` (lower quality until it fits)."""
    for quality in (80, 60, 40, 25):
        shot = b.call(
            "Page.captureScreenshot",
            session=True,
            format="jpeg",
            quality=quality,
            captureBeyondViewport=False,
        )
        data = base64.b64decode(shot["data"])
        if len(data) <= cmd["screenshot_max"]:
            with open(cmd["screenshot"], "wb") as f:
                f.write(data)
            return
    raise Refused("the screenshot is too large even at low quality")


def main() -> None:
    if len(sys.argv) > 1:  # --serve or --ask: a browser kept for the turn
        if TYPE_CHECKING or __package__:
            from core.browser.serving import command_line
        else:
            from serving import command_line
        command_line(sys.argv[1], sys.modules[__name__])
        return
    print(json.dumps(run(json.loads(sys.stdin.read()))))


def load_state(path: str) -> Json:
    try:
        with open(path) as f:
            state: Json = json.load(f)
    except (OSError, ValueError):
        state = {"url": None, "history": [], "fills": []}
    return state


def save_state(path: str, state: Json) -> None:
    state["history"] = state["history"][-20:]
    with open(path, "w") as f:
        json.dump(state, f)


def failed(exc: BaseException, b: Browser | None, cmd: Json) -> Json:
    out: Json = {"ok": False, "error": str(exc)}
    over = getattr(getattr(b, "link", None), "over_kb", 0)
    if over:
        out["error"] = (
            f"the page used more than {cmd.get('memory_mb')} MB of memory "
            f"({over // 1024} MB across the browser's processes); the browser was stopped"
        )
    return out


def still_showing(b: Browser, state: Json) -> str | None:
    """After a failed action: the state's page when the browser still has it open (a refused
    ref or address changed nothing), else None, so the next action reopens it."""
    if not b.alive() or not state.get("url"):
        return None
    b.deadline = time.monotonic() + 2.0
    try:
        return state["url"] if b.url() == state["url"] else None
    except (TimeoutError, RuntimeError):
        return None


def run(cmd: Json) -> Json:
    """Perform ``cmd`` with a browser of its own, ended afterwards (the state, profile and output
    files are relative to the workspace)."""
    state = load_state(cmd["state"])
    b: Browser | None = None
    try:
        b = Browser(cmd)
        out = perform(b, cmd, state)
    except (Refused, DownloadRefused, TimeoutError, RuntimeError) as exc:  # it did not start
        out = failed(exc, b, cmd)
    finally:
        if b is not None:
            b.close()
    save_state(cmd["state"], state)
    return out


def perform(b: Browser, cmd: Json, state: Json) -> Json:
    """Perform ``cmd`` on ``b``, which may have served earlier actions; the answer."""
    b.begin(cmd)
    out: Json = {"ok": True}
    try:
        if b.hosted:
            b.set_cookies(state.get("cookies"))
        act(b, cmd, state)
        b.finish_downloads()
        out["downloads"] = list(b.downloads.kept)
        if state.get("url"):
            info = json.loads(b.js(SNAPSHOT_JS))
            out.update(url=b.url(), title=info["title"], lines=info["lines"])
            if cmd["action"] == "images":
                out["images"] = b.js(
                    "[...document.images].slice(0, 50).map(i => "
                    "[i.currentSrc || i.src, i.alt || ''])"
                )
            if cmd["action"] == "screenshot":
                screenshot(b, cmd)
        if b.hosted:
            state["cookies"] = b.cookies()
        # the page open now, read with the snapshot: the state's page, or not (a download
        # left about:blank in a browser of its own)
        b.showing = out.get("url") if out.get("url") == state.get("url") else None
    except (Refused, DownloadRefused, TimeoutError, RuntimeError) as exc:
        out = failed(exc, b, cmd)
        b.showing = still_showing(b, state)
    out["refused"] = b.refusals()
    out["console"] = b.console[-50:]
    return out


if __name__ == "__main__":
    main()
