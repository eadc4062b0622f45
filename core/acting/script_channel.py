"""The turn's side of the channel an ``execute_code`` script calls tools through.

The script (``core/acting/iris_tools.py`` in the sandbox) renames one JSON request at a time
into ``<run>/in/req-NNNNNN.json``; this side lists that directory through the sandbox's own
file API (the one every backend has: local, Modal, Daytona), runs each request through the
turn's tool dispatch, and writes the answer to ``<run>/out/res-NNNNNN.json``.

A request is refused, and nothing runs, unless it is whole JSON of exactly the expected shape,
carries this run's token, names one of ``SCRIPT_TOOLS``, and is within the run's limits. It
has no field for a user, a session or an approval: every call is made with the turn's own
context, so a forged request can at most do what the model could do directly, as that user.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, ValidationError

from core.ids import new_id
from core.messages import ToolCall

if TYPE_CHECKING:
    from core.contracts.toolkit import ToolOutcome
    from sandboxes import Sandbox

log = logging.getLogger("iris.acting")

ScriptTool = Literal[
    "web_search", "web_extract", "read_file", "write_file", "search_files", "patch", "terminal",
]
SCRIPT_TOOLS: tuple[str, ...] = get_args(ScriptTool)
MAX_REQUEST_BYTES = 1_000_000
REFUSALS_KEPT = 5
_REQUEST = re.compile(r"req-(\d{6})\.json")
_FIRST_POLL = 0.002
_LONGEST_POLL = 0.25
_SLOWER = 1.25  # about a second of quick looks after a request, then every quarter second


class Request(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    token: str
    id: int
    tool: ScriptTool
    args: dict[str, Any]


Dispatch = Callable[[ToolCall], Awaitable["ToolOutcome"]]


@dataclass
class ChannelReport:
    """What the script asked for: counted calls, their failures, and refused requests."""

    calls: int = 0
    failures: list[str] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    refused: int = 0
    ignored: int = 0


class ScriptChannel:
    """Answers one run's requests until its script ends."""

    def __init__(
        self, box: Sandbox, run_dir: str, token: str, dispatch: Dispatch, *, max_calls: int
    ) -> None:
        self._box = box
        self._in = f"{run_dir}/in"
        self._out = f"{run_dir}/out"
        self._token = token
        self._dispatch = dispatch
        self._max_calls = max_calls
        self._seen: set[str] = set()
        self.report = ChannelReport()

    async def serve(self, script: asyncio.Task[Any]) -> None:
        """Answer requests while ``script`` runs; look more often right after a request."""
        pause = _FIRST_POLL
        while not script.done():
            busy = await self._answer_new(script)
            pause = _FIRST_POLL if busy else min(pause * _SLOWER, _LONGEST_POLL)
            await asyncio.wait({script}, timeout=pause)

    async def _answer_new(self, script: asyncio.Task[Any]) -> bool:
        from sandboxes import SandboxError, SandboxFileNotFound

        try:
            entries = await self._box.list_dir(self._in)
        except SandboxFileNotFound:  # the script has not made its directories yet
            return False
        except SandboxError as exc:
            log.warning("execute_code: could not look for requests: %s", exc)
            return False
        fresh = sorted((e for e in entries if e.name not in self._seen and not e.is_dir),
                       key=lambda e: e.name)
        for entry in fresh:
            if script.done():
                return True
            self._seen.add(entry.name)
            await self._answer(entry.name, entry.size)
        return bool(fresh)

    async def _answer(self, name: str, size: int) -> None:
        match = _REQUEST.fullmatch(name)
        if match is None:
            self._refuse(None, f"{name!r} is not a request file name")
            return
        number = int(match[1])
        if self._answered() >= 2 * self._max_calls:  # a flood: no more reading, no answers
            self.report.ignored += 1
            return
        if size > MAX_REQUEST_BYTES:
            await self._reply(number, error=self._refuse(
                number, f"request {number} is larger than {MAX_REQUEST_BYTES} bytes"))
            return
        request, problem = await self._read(name, number)
        if request is None:
            await self._reply(number, error=self._refuse(number, problem))
            return
        if self.report.calls >= self._max_calls:
            await self._reply(number, error=self._refuse(
                number, f"the limit of {self._max_calls} tool calls per script was reached"))
            return
        self.report.calls += 1
        call = ToolCall(id=new_id("xc"), name=request.tool, arguments=json.dumps(request.args))
        outcome = await self._dispatch(call)
        if outcome.ok:
            await self._reply(number, output=outcome.output)
        else:
            self.report.failures.append(f"{request.tool}: {outcome.output}")
            await self._reply(number, error=outcome.output)

    async def _read(self, name: str, number: int) -> tuple[Request | None, str]:
        from sandboxes import SandboxError

        try:
            data = await self._box.read_file(f"{self._in}/{name}", max_bytes=MAX_REQUEST_BYTES)
        except SandboxError as exc:
            return None, f"request {number} could not be read: {exc}"
        try:
            request = Request.model_validate_json(data)
        except ValidationError as exc:
            return None, f"request {number} is not a valid request ({_first_error(exc)})"
        if not hmac.compare_digest(request.token.encode(), self._token.encode()):
            return None, f"request {number} does not carry this run's token"
        if request.id != number:
            return None, f"request {number} names itself {request.id}"
        return request, ""

    def _refuse(self, number: int | None, reason: str) -> str:
        self.report.refused += 1
        if len(self.report.refusals) < REFUSALS_KEPT:
            self.report.refusals.append(reason)
        log.warning("execute_code refused a request: %s", reason)
        return f"refused: {reason}"

    def _answered(self) -> int:
        return self.report.calls + self.report.refused

    async def _reply(self, number: int, *, output: str | None = None,
                     error: str | None = None) -> None:
        from sandboxes import SandboxError

        body = {"id": number, "ok": error is None, "output": output or "", "error": error}
        try:
            await self._box.write_file(f"{self._out}/res-{number:06d}.json",
                                       json.dumps(body).encode())
        except SandboxError as exc:
            log.warning("execute_code: could not answer request %s: %s", number, exc)


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"]) or "the request"
    return f"{where}: {error['msg']}"
