"""Running one browser action in the user's sandbox: the driver (``core.browser.driver``) is
written into the workspace, given its command as a file, and run there with the same exec,
walls, timeout and ``/stop`` as ``terminal``. Its JSON answer becomes the model's text. With a
hosted browser (``IRIS_BROWSER_CDP_URL``) the driver runs on Iris' side instead
(``core.browser.hosted``)."""

from __future__ import annotations

import asyncio
import json
import weakref
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.acting.stopping import watch_for_stop
from core.acting.tooling import sandbox_errors, workspaces
from core.browser.hosted import drive_hosted
from core.contracts.toolkit import ToolContext
from core.errors import ToolRetry

if TYPE_CHECKING:
    from core.config import Settings
    from sandboxes import ExecResult, Sandbox

DIR = ".iris/browser"
PROFILE = f"{DIR}/profile"
DOWNLOADS = "downloads"  # in the workspace: where the page's downloads land
SCREENSHOT_MAX_BYTES = 2_000_000  # a viewport JPEG is ~50-300 kB; the driver lowers quality
_locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()


# The driver script and the modules it imports, copied side by side into the workspace.
DRIVER_FILES = ("driver.py", "netguard.py", "downloads.py", "links.py", "cdp_socket.py")


@cache
def driver_source(name: str = "driver.py") -> bytes:
    return (Path(__file__).parent / name).read_bytes()


def _lock(user_id: str) -> asyncio.Lock:
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


async def drive(
    box: Sandbox,
    command: dict[str, Any],
    stop: asyncio.Event | None = None,
    cdp_url: str | None = None,
) -> ExecResult:
    """Run the driver once in ``box`` (any backend: the same script everywhere), or, with a
    hosted browser's ``cdp_url``, on Iris' side with ``box``'s state (``core.browser.hosted``)."""
    if cdp_url is not None:
        return await drive_hosted(box, command, cdp_url, stop)
    for name in DRIVER_FILES:
        await box.write_file(f"{DIR}/{name}", driver_source(name))
    await box.write_file(f"{DIR}/command.json", json.dumps(command).encode())
    return await box.exec(
        f"python3 {DIR}/driver.py < {DIR}/command.json",
        timeout=command["timeout"] + 10,
        stop=stop,
    )


async def run_action(
    ctx: ToolContext, action: str, args: dict[str, Any], *, read_back: str | None = None
) -> dict[str, Any]:
    """The driver's answer to ``action``; ``ToolRetry`` when it failed or was refused. With
    ``read_back`` (a key of the command naming a file the driver wrote), that file's bytes, read
    from the same sandbox under the same lock, are the answer's ``file``."""
    s = ctx.settings
    command = command_for(s, action, args)
    with sandbox_errors():
        async with (
            _lock(ctx.user_id),
            workspaces(ctx).use(ctx.user_id) as box,
            watch_for_stop(ctx, f"browser_{action}") as stop,
        ):
            result = await drive(box, command, stop, s.secret("browser_cdp_url"))
            answer = _answer(result, s.browser_action_timeout)
            if read_back is not None:
                answer["file"] = await box.read_file(command[read_back], SCREENSHOT_MAX_BYTES)
    return answer


def _answer(result: ExecResult, timeout: float) -> dict[str, Any]:
    if result.stopped:
        raise ToolRetry("stopped: the user sent /stop; the browser action was ended")
    if result.timed_out:
        raise ToolRetry(f"the browser action took longer than {timeout:g} s")
    return checked(answer_of(result))


def answer_of(result: ExecResult) -> dict[str, Any]:
    """The driver's JSON answer, or ``ToolRetry`` saying why there is none."""
    try:
        answer: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise ToolRetry(
            f"the browser could not run in this sandbox: {(result.stderr or result.stdout)[-400:]}"
        ) from None
    return answer


def checked(answer: dict[str, Any]) -> dict[str, Any]:
    if not answer.get("ok"):
        raise ToolRetry(f"browser: {answer.get('error')}{_refused(answer)}")
    return answer


def _refused(answer: dict[str, Any]) -> str:
    refused = answer.get("refused") or []
    if not refused:
        return ""
    shown = "\n".join(f"- {r}" for r in refused[:10])
    return f"\n\nRequests refused (local or private addresses are never fetched):\n{shown}"


def page_view(answer: dict[str, Any], cap: int, page: int = 1) -> str:
    """The page as the model reads it: title, URL, one numbered window of the snapshot."""
    lines: list[str] = answer.get("lines") or []
    windows: list[list[str]] = [[]]
    size = 0
    for line in lines:
        if size + len(line) + 1 > cap and windows[-1]:
            windows.append([])
            size = 0
        windows[-1].append(line[:cap])
        size += len(line) + 1
    page = max(1, min(page, len(windows)))
    head = f"# {answer.get('title') or '(untitled)'}\nURL: {answer.get('url')}"
    if len(windows) > 1:
        head += f"\n(snapshot part {page} of {len(windows)}; browser_snapshot(page=N) for more)"
    body = "\n".join(windows[page - 1]) or "(nothing visible on the page)"
    return f"{head}\n\n{body}{_downloaded(answer)}{_refused(answer)}"


def _downloaded(answer: dict[str, Any]) -> str:
    kept = answer.get("downloads") or []
    if not kept:
        return ""
    shown = "\n".join(f"- {DOWNLOADS}/{d['name']} ({d['bytes']} bytes)" for d in kept)
    return f"\n\nDownloaded into the workspace:\n{shown}"
