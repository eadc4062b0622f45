"""Running the driver (``core.browser.driver``) in the user's sandbox, on any backend: its files
are written into the workspace and it runs there with the same exec, walls, time limits and
``/stop`` as ``terminal``.

Within a turn, a ``WarmBrowser`` keeps one Chromium for all of the turn's actions: it starts
``driver.py --serve`` as a sandbox command of its own that lasts the turn, and each action is a
short ``driver.py --ask`` that hands the action to it over a Unix socket in the workspace
(``core.browser.serving``). The page stays open between actions (what its scripts drew, a
"load more" pressed, values typed), and Chromium starts once. Outside a turn (``drive``), an
action runs with a Chromium of its own unless a turn's browser is running, which it then uses;
the two never run on one profile at once. With a hosted browser (``IRIS_BROWSER_CDP_URL``) the
driver runs on Iris' side instead (``core.browser.hosted``), one action at a time."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import weakref
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.browser.hosted import drive_hosted

if TYPE_CHECKING:
    from core.config import Settings
    from sandboxes import ExecResult, Sandbox

log = logging.getLogger("iris.browser")

DIR = ".iris/browser"
PROFILE = f"{DIR}/profile"
SOCKET = f"{DIR}/ctl.sock"  # the turn's browser listens here (relative: AF_UNIX caps the length)
DOWNLOADS = "downloads"  # in the workspace: where the page's downloads land
SCREENSHOT_MAX_BYTES = 2_000_000  # a viewport JPEG is ~50-300 kB; the driver lowers quality
START_SECONDS = 30.0  # for the turn's browser to listen, on a busy sandbox
QUIT_SECONDS = 15.0  # for it to end Chromium (which writes its cookies out) at the turn's end
RETIRE_AT = 0.8  # of the idle time: a server unused this long is ended before the next action
# The driver script and the modules it imports, copied side by side into the workspace.
DRIVER_FILES = (
    "driver.py", "serving.py", "page_js.py", "netguard.py", "downloads.py", "links.py",
    "cdp_socket.py",
)
_locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()


@cache
def driver_source(name: str = "driver.py") -> bytes:
    return (Path(__file__).parent / name).read_bytes()


def user_lock(user_id: str) -> asyncio.Lock:
    """One action at a time per user: the profile is one Chromium's at a time."""
    lock = _locks.get(user_id)
    if lock is None:
        lock = _locks[user_id] = asyncio.Lock()
    return lock


def command_for(settings: Settings, action: str, args: dict[str, Any]) -> dict[str, Any]:
    """What the driver is told: the action, where its files are, and the rules it enforces."""
    return {
        "action": action,
        "args": args,
        "state": f"{DIR}/state.json",
        "profile": PROFILE,
        "socket": SOCKET,
        "screenshot": f"{DIR}/screenshot.jpg",
        "screenshot_max": SCREENSHOT_MAX_BYTES,
        "downloads": DOWNLOADS,
        "download_max_bytes": settings.browser_download_max_bytes,
        "downloads_max": settings.browser_downloads_max,
        "allow": [h.lower() for h in settings.web_allow_hosts],
        "timeout": settings.browser_action_timeout,
        "chromium": settings.browser_chromium,
        "heap_mb": settings.browser_heap_mb,
        "memory_mb": settings.browser_memory_mb,
        "hosted": settings.browser_cdp_url is not None,
    }


async def write_driver(box: Sandbox) -> None:
    for name in DRIVER_FILES:
        await box.write_file(f"{DIR}/{name}", driver_source(name))


async def ask(box: Sandbox, command: dict[str, Any], stop: asyncio.Event | None,
              wait_server: float = 0.0) -> ExecResult:
    """``driver.py --ask``: the turn's browser answers when one is running (waited for up to
    ``wait_server`` seconds), else the action runs with a browser of its own."""
    asked = {**command, "wait_server": wait_server}
    await box.write_file(f"{DIR}/command.json", json.dumps(asked).encode())
    return await box.exec(
        f"python3 {DIR}/driver.py --ask < {DIR}/command.json",
        timeout=command["timeout"] + 10 + wait_server,
        stop=stop,
    )


async def drive(
    box: Sandbox,
    command: dict[str, Any],
    stop: asyncio.Event | None = None,
    cdp_url: str | None = None,
) -> ExecResult:
    """One action in ``box`` (any backend: the same script everywhere), or, with a hosted
    browser's ``cdp_url``, on Iris' side with ``box``'s state (``core.browser.hosted``)."""
    if cdp_url is not None:
        return await drive_hosted(box, command, cdp_url, stop)
    await write_driver(box)
    return await ask(box, command, stop)


class WarmBrowser:
    """The turn's browser in one user's sandbox. ``use()`` gives the sandbox for one operation
    (``Workspaces.use``); the server's command holds it for the server's life."""

    def __init__(self, settings: Settings,
                 use: Callable[[], AbstractAsyncContextManager[Sandbox]],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self._use = use
        self._clock = clock
        self._server: asyncio.Task[ExecResult] | None = None
        self._halt = asyncio.Event()
        self._last = 0.0  # when the last action ended (``clock``)
        # The server could not start (no socket, an old Python): actions run one by one
        self.broken = False
        self.starts = 0

    @property
    def running(self) -> bool:
        return self._server is not None and not self._server.done()

    async def act(self, box: Sandbox, command: dict[str, Any],
                  stop: asyncio.Event | None) -> ExecResult:
        """Run ``command`` on the turn's browser, starting it first when it is not running."""
        if self.broken:
            return await drive(box, command, stop)
        unused = self._clock() - self._last
        if self.running and unused > RETIRE_AT * self.settings.browser_idle_seconds:
            # near its idle end: an action sent now could meet the server leaving. End it
            # cleanly and start another (which reopens the page from the state)
            await self.retire()
        if not self.running:
            await self._start(box, command)
        try:
            result = await ask(box, command, stop, wait_server=START_SECONDS)
        finally:
            self._last = self._clock()
        if result.stopped or result.timed_out:
            await self.kill()  # it may still be in the action: end it, and its Chromium
        elif _last_json(result.stdout).get("no_server"):
            log.warning("the browser could not be kept for the turn: %s", await self.kill())
            self.broken = True
            return await drive(box, command, stop)
        return result

    async def _start(self, box: Sandbox, command: dict[str, Any]) -> None:
        await self.kill()  # one that ended by itself (idle, its time up) is collected first
        await write_driver(box)
        settings = {**command, "idle": self.settings.browser_idle_seconds}
        await box.write_file(f"{DIR}/serve.json", json.dumps(settings).encode())
        self._halt = asyncio.Event()
        self._server = asyncio.create_task(self._serve())
        self.starts += 1

    async def _serve(self) -> ExecResult:
        async with self._use() as box:
            return await box.exec(
                f"python3 {DIR}/driver.py --serve < {DIR}/serve.json",
                timeout=self.settings.browser_warm_seconds,
                stop=self._halt,
            )

    async def kill(self) -> str:
        """End the server at once (and its Chromium with it); what it printed, for a log."""
        server = self._server
        if server is None:
            return ""
        self._halt.set()
        self._server = None
        try:
            result = await server
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"
        return (result.stderr or result.stdout)[-400:]

    async def aclose(self) -> None:
        """At the turn's end (``ToolContext.resources``): ``retire``."""
        await self.retire()

    async def retire(self) -> None:
        """Tell the server to quit, so Chromium ends cleanly and writes its profile out; kill
        it if it does not within ``QUIT_SECONDS``."""
        server = self._server
        if server is None:
            return
        if not server.done():
            try:
                async with self._use() as box:
                    await box.exec(
                        f"echo '{json.dumps({'action': 'quit', 'socket': SOCKET})}'"
                        f" | python3 {DIR}/driver.py --ask",
                        timeout=QUIT_SECONDS,
                    )
                await asyncio.wait_for(asyncio.shield(server), QUIT_SECONDS)
            except Exception as exc:  # the sandbox went away, or the quit was not heard
                log.warning("the turn's browser did not quit when asked: %s", exc)
        with contextlib.suppress(Exception):
            await self.kill()


def _last_json(stdout: str) -> dict[str, Any]:
    try:
        found = json.loads(stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {}
    return found if isinstance(found, dict) else {}
