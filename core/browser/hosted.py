"""A browser action outside a turn on a hosted browser (``IRIS_BROWSER_CDP_URL``, e.g.
Browserbase; a turn keeps one with ``hosted_warm``): the same driver runs on Iris' side, not in
the sandbox, so the endpoint's address and key never enter the user's workspace. It runs in a
scratch directory holding the user's ``state.json`` (open page, history, the hosted context's
cookies) copied from their sandbox; the state and a screenshot are copied back afterwards. The
browser gets a fresh context per action (created and disposed by the driver), so users sharing
one endpoint share no cookies or storage."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sandboxes.base import ExecResult, SandboxFileNotFound, Stopped, within

if TYPE_CHECKING:
    from sandboxes import Sandbox

DRIVER = Path(__file__).parent / "driver.py"
STATE_MAX_BYTES = 1_000_000


async def drive_hosted(
    box: Sandbox, command: dict[str, Any], url: str, stop: asyncio.Event | None
) -> ExecResult:
    """Run the driver against ``url`` with ``box``'s browser state; the result as an exec's."""
    with tempfile.TemporaryDirectory(prefix="iris-browser-") as tmp:
        work = Path(tmp)
        state = work / command["state"]
        state.parent.mkdir(parents=True)
        with contextlib.suppress(SandboxFileNotFound):
            state.write_bytes(await box.read_file(command["state"], STATE_MAX_BYTES))
        started = time.monotonic()
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-E",  # not -I: that would leave out the script's folder, where its modules are
            "-s",
            str(DRIVER),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=tmp,
            env={"PATH": os.environ.get("PATH", ""), "IRIS_BROWSER_CDP_URL": url},
            start_new_session=True,
        )
        timed_out = stopped = False
        out = err = b""
        try:
            out, err = await within(
                proc.communicate(json.dumps(command).encode()), command["timeout"] + 10, stop
            )
        except (TimeoutError, Stopped) as ended:
            timed_out, stopped = isinstance(ended, TimeoutError), isinstance(ended, Stopped)
        finally:
            if proc.returncode is None:
                proc.kill()
                await asyncio.shield(proc.wait())
        if state.exists():
            await box.write_file(command["state"], state.read_bytes())
        shot = work / command["screenshot"]
        if shot.exists():
            await box.write_file(command["screenshot"], shot.read_bytes())
    return ExecResult(
        exit_code=proc.returncode or 0,
        stdout=out.decode(errors="replace"),
        stderr=err.decode(errors="replace")[-4000:],
        truncated=False,
        duration=time.monotonic() - started,
        timed_out=timed_out,
        stopped=stopped,
    )
