"""Running an ``execute_code`` script in the user's sandbox, with its tool channel.

Each run gets a directory ``.iris-exec/<run id>`` in the workspace holding the script
(``main.py``), the ``iris_tools`` module and the channel's ``in/``, ``out/`` and ``tmp/``
directories, and a random token the script receives in its environment only. The script runs
with the sandbox's own ``exec`` (so the same walls as a terminal command: bubblewrap locally,
the user's Modal or Daytona sandbox), with the cwd at the workspace root, while the turn
answers its tool requests (``core.acting.script_channel``). The directory is removed when the
script has ended (and one left behind by a turn that died, by a later run).

A ``/stop`` for the turn ends the script at once, in the sandbox too, with what it printed
so far (``core.acting.stopping``), instead of letting it run to its time limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import shlex
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from core.acting.output import format_exec
from core.acting.script_channel import ChannelReport, ScriptChannel
from core.acting.stopping import noted_if_stopped, watch_for_stop
from core.acting.tooling import sandbox_errors, workspaces

if TYPE_CHECKING:
    from core.config import Settings
    from core.contracts.toolkit import ToolContext, ToolOutcome, Toolset
    from core.messages import ToolCall
    from sandboxes import ExecResult, Sandbox

RUNS_DIR = ".iris-exec"
SHIM = Path(__file__).with_name("iris_tools.py")
CLEANUP_TIMEOUT = 30.0
STALE_MARGIN_MINUTES = 5
FAILURES_SHOWN = 5
FAILURE_CHARS = 300


@dataclass(frozen=True)
class ScriptRun:
    result: ExecResult
    report: ChannelReport


@cache
def shim_source() -> bytes:
    return SHIM.read_bytes()


def command_for(run_dir: str) -> str:
    """The shell command that makes the channel's directories and starts the script."""
    run = shlex.quote(run_dir)
    return (
        f'R={run}; mkdir -p "$R/in" "$R/out" "$R/tmp" && '
        f'IRIS_TOOLS_DIR="$PWD/$R" exec python3 -u "$PWD/$R/main.py"'
    )


async def run_script(ctx: ToolContext, toolset: Toolset, code: str) -> ScriptRun:
    """Run ``code`` in ``ctx``'s user's sandbox; its tool calls go through ``toolset`` with
    ``ctx``, as the model's own calls do."""
    settings = ctx.settings
    run_dir = f"{RUNS_DIR}/{secrets.token_hex(8)}"
    token = secrets.token_urlsafe(32)

    async def dispatch(call: ToolCall) -> ToolOutcome:
        return await toolset.dispatch(ctx, call)

    with sandbox_errors():
        async with workspaces(ctx).use(ctx.user_id) as box:
            channel = ScriptChannel(box, run_dir, token, dispatch,
                                    max_calls=settings.execute_code_max_calls)
            try:
                await box.write_file(f"{run_dir}/iris_tools.py", shim_source())
                await box.write_file(f"{run_dir}/main.py", code.encode("utf-8"))
                async with watch_for_stop(ctx, "execute_code") as stop:
                    result = await _run(box, channel, run_dir, token, settings, stop)
            finally:
                await _clean_up(box, run_dir, settings)
    return ScriptRun(result=result, report=channel.report)


async def _run(box: Sandbox, channel: ScriptChannel, run_dir: str, token: str,
               settings: Settings, stop: asyncio.Event) -> ExecResult:
    script = asyncio.create_task(box.exec(
        command_for(run_dir), timeout=settings.execute_code_timeout,
        env={"IRIS_TOOLS_TOKEN": token}, stop=stop,
    ))
    try:
        await channel.serve(script)
        result = await script
    finally:
        if not script.done():
            script.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await script
    return noted_if_stopped(result, "script")


async def _clean_up(box: Sandbox, run_dir: str, settings: Settings) -> None:
    """Remove this run's directory, and any left by a run whose turn died (older than the
    longest a run may last, so a run in progress beside this one is never touched)."""
    from sandboxes import SandboxError

    stale = int(settings.execute_code_timeout // 60) + STALE_MARGIN_MINUTES
    command = (
        f"rm -rf -- {shlex.quote(run_dir)}; "
        f"find {RUNS_DIR} -mindepth 1 -maxdepth 1 -mmin +{stale} -exec rm -rf -- {{}} + "
        f"2>/dev/null; rmdir {RUNS_DIR} 2>/dev/null; true"
    )
    with contextlib.suppress(SandboxError):
        await box.exec(command, timeout=CLEANUP_TIMEOUT)


def describe(run: ScriptRun, settings: Settings) -> str:
    """What the model reads: the script's exit status and printed output (capped), then how
    many tools it called, the calls that failed, and the requests that were refused."""
    report = run.report
    lines = [format_exec(run.result, settings.execute_code_output_chars)]
    limit = settings.execute_code_max_calls
    reached = " (the limit)" if report.calls >= limit else ""
    lines.append(f"tool calls made by the script: {report.calls} of {limit}{reached}")
    if report.failures:
        lines.append(f"failed tool calls ({len(report.failures)}):")
        lines += [f"- {_short(text)}" for text in report.failures[:FAILURES_SHOWN]]
    if report.refused or report.ignored:
        lines.append(f"requests refused: {report.refused}, ignored: {report.ignored}")
        lines += [f"- {_short(text)}" for text in report.refusals]
    return "\n".join(lines)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= FAILURE_CHARS else text[: FAILURE_CHARS - 1] + "…"
