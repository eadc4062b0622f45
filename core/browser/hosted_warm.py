"""A hosted browser (``IRIS_BROWSER_CDP_URL``) kept for a turn: the same ``driver.py --serve``
as in a sandbox (``core.browser.serving``), run on Iris' side in a scratch directory of its own,
so the endpoint's address and key never enter the user's workspace. The server holds one
browser context on the endpoint for the turn (the page stays open between actions; no other
user's context shares anything with it). Iris talks to its socket directly. The user's
``state.json`` is copied in from their sandbox when it starts, and back (with a screenshot, when
one was taken) after each action; the scratch directory is removed when it ends."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.browser.hosted import DRIVER, STATE_MAX_BYTES
from core.browser.sandboxed import QUIT_SECONDS, RETIRE_AT, SOCKET, START_SECONDS
from core.browser.serving import ACTION_KEYS
from sandboxes.base import ExecResult, SandboxFileNotFound, Stopped, within

if TYPE_CHECKING:
    from core.config import Settings
    from sandboxes import Sandbox

ANSWER_MAX = 64 << 20


class HostedWarmBrowser:
    """One user's turn on a hosted browser; ``act`` and ``aclose`` as ``WarmBrowser``'s."""

    def __init__(self, settings: Settings, url: str,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.url, self.idle = url, settings.browser_idle_seconds
        self._clock = clock
        self._last = 0.0
        self._proc: asyncio.subprocess.Process | None = None
        self._dir: Path | None = None
        self.starts = 0

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.returncode is None

    async def act(self, box: Sandbox, command: dict[str, Any],
                  stop: asyncio.Event | None) -> ExecResult:
        if self.running and self._clock() - self._last > RETIRE_AT * self.idle:
            await self.aclose()  # near its idle end (see ``WarmBrowser.act``)
        if not self.running:
            await self._start(box, command)
        started = time.monotonic()
        timed_out = stopped = False
        out = b""
        try:
            out = await within(self._send(command), command["timeout"] + 10 + START_SECONDS,
                               stop)
        except (TimeoutError, Stopped) as ended:
            timed_out, stopped = isinstance(ended, TimeoutError), isinstance(ended, Stopped)
        finally:
            self._last = self._clock()
        await self._copy_back(box, command)
        if timed_out or stopped:
            await self._kill()  # it may still be in the action
        if not out and not (timed_out or stopped):
            out = json.dumps({"ok": False, "error": "the browser ended unexpectedly"}).encode()
        return ExecResult(exit_code=0, stdout=out.decode(errors="replace"), stderr="",
                          truncated=False, duration=time.monotonic() - started,
                          timed_out=timed_out, stopped=stopped)

    async def _start(self, box: Sandbox, command: dict[str, Any]) -> None:
        await self._kill()
        work = Path(tempfile.mkdtemp(prefix="iris-browser-"))
        state = work / command["state"]
        state.parent.mkdir(parents=True)
        with contextlib.suppress(SandboxFileNotFound):
            state.write_bytes(await box.read_file(command["state"], STATE_MAX_BYTES))
        settings = json.dumps({**command, "idle": self.idle}).encode()
        self._dir = work
        self._proc = await asyncio.create_subprocess_exec(
            sys.executable, "-E", "-s", str(DRIVER), "--serve",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
            cwd=work,
            env={"PATH": os.environ.get("PATH", ""), "IRIS_BROWSER_CDP_URL": self.url},
            start_new_session=True,
        )
        assert self._proc.stdin is not None
        self._proc.stdin.write(settings)
        self._proc.stdin.close()
        self.starts += 1

    async def _send(self, action: dict[str, Any]) -> bytes:
        """``action`` to the server's socket (waited for while it starts); its answer."""
        assert self._dir is not None and self._proc is not None
        path = str(self._dir / action["socket"])
        end = time.monotonic() + START_SECONDS
        while True:
            try:
                reader, writer = await asyncio.open_unix_connection(path)
                break
            except OSError:
                if self._proc.returncode is not None or time.monotonic() > end:
                    return json.dumps({"ok": False,
                                       "error": "the hosted browser could not be reached"}).encode()
                await asyncio.sleep(0.05)  # the server binds its socket as it starts
        try:
            writer.write(json.dumps({k: action[k] for k in ACTION_KEYS if k in action}).encode())
            writer.write_eof()
            return await reader.read(ANSWER_MAX)
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def _copy_back(self, box: Sandbox, command: dict[str, Any]) -> None:
        if self._dir is None:
            return
        for key in ("state", "screenshot"):
            made = self._dir / command[key]
            if made.exists():
                await box.write_file(command[key], made.read_bytes())
                if key == "screenshot":
                    made.unlink()

    async def _kill(self) -> None:
        proc, work = self._proc, self._dir
        self._proc = self._dir = None
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 9)
            await proc.wait()
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)

    async def aclose(self) -> None:
        """Quit (the server disposes of its context on the endpoint), then clean up."""
        if self.running and self._dir is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._send({"action": "quit", "socket": SOCKET}),
                                       QUIT_SECONDS)
                assert self._proc is not None
                await asyncio.wait_for(self._proc.wait(), QUIT_SECONDS)
        await self._kill()
