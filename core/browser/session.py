"""One browser action for a tool: on the turn's browser when the tool runs in a turn (in the
user's sandbox, ``sandboxed.WarmBrowser``, or on the hosted endpoint, ``hosted_warm``), else
with a browser of its own (``sandboxed.drive``); the driver's JSON answer becomes the model's
text (``page_view``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from core.acting.stopping import watch_for_stop
from core.acting.tooling import sandbox_errors, workspaces
from core.browser.hosted_warm import HostedWarmBrowser
from core.browser.sandboxed import (
    DOWNLOADS,
    SCREENSHOT_MAX_BYTES,
    WarmBrowser,
    command_for,
    drive,
    user_lock,
)
from core.contracts.toolkit import ToolContext
from core.errors import ToolRetry

if TYPE_CHECKING:
    from sandboxes import ExecResult


async def run_action(
    ctx: ToolContext, action: str, args: dict[str, Any], *, read_back: str | None = None
) -> dict[str, Any]:
    """The driver's answer to ``action``; ``ToolRetry`` when it failed or was refused. With
    ``read_back`` (a key of the command naming a file the driver wrote), that file's bytes, read
    from the same sandbox under the same lock, are the answer's ``file``."""
    s = ctx.settings
    command = command_for(s, action, args)
    cdp_url = s.secret("browser_cdp_url")
    with sandbox_errors():
        async with (
            user_lock(ctx.user_id),
            workspaces(ctx).use(ctx.user_id) as box,
            watch_for_stop(ctx, f"browser_{action}") as stop,
        ):
            warm = turn_browser(ctx, cdp_url)
            if warm is not None:
                result = await warm.act(box, command, stop)
            else:
                result = await drive(box, command, stop, cdp_url)
            answer = _answer(result, s.browser_action_timeout)
            if read_back is not None:
                answer["file"] = await box.read_file(command[read_back], SCREENSHOT_MAX_BYTES)
    return answer


def turn_browser(ctx: ToolContext, cdp_url: str | None) -> WarmBrowser | HostedWarmBrowser | None:
    """The browser kept for ``ctx``'s turn (made at its first action; on the hosted endpoint
    ``cdp_url`` when there is one), or None outside a turn."""
    if ctx.resources is None:
        return None
    kept = ctx.resources.get("browser")
    if isinstance(kept, WarmBrowser | HostedWarmBrowser):
        return kept
    made: WarmBrowser | HostedWarmBrowser
    if cdp_url is not None:
        made = HostedWarmBrowser(ctx.settings, cdp_url)
    else:
        made = WarmBrowser(ctx.settings, lambda: workspaces(ctx).use(ctx.user_id))
    ctx.resources["browser"] = made
    return made


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
