"""Parse strangers' bytes in a fresh child process, within limits, without blocking the loop.

``parse(kind, data, user_id=..., limits=...)`` spawns ``core/parsers/child.py`` (CPU time and
address space limited by the child itself, dying with the server through PR_SET_PDEATHSIG),
feeds it the bytes on stdin and collects its text as it comes. Past the wall time or the output
cap the child is killed; past its CPU time the kernel ends it; past its memory it stops. In each
case the caller gets the text read so far and ``cut`` says why. A child that dies otherwise
(a crash, a kill from outside) raises ``ParserCrashed``; a document the parser rejects raises
``ParseRefused``. At most ``limits.concurrency`` children run at once, and one per user: a
user's second document waits behind the first, never in front of another user's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from core.parsers import child

if TYPE_CHECKING:
    from core.config import Settings

log = logging.getLogger("iris.parsers")

Kind = Literal["pdf", "html", "mail"]
Cut = Literal["time", "cpu", "memory", "output"]
CHILD = Path(child.__file__).resolve()


class ParseRefused(ValueError):
    """The parser read the document and rejected it (encrypted, not a PDF): the message says."""


class ParserCrashed(RuntimeError):
    """The parsing child died without finishing (a crash, or killed from outside)."""


@dataclass(frozen=True)
class ParseLimits:
    cpu_seconds: int = 20
    wall_seconds: float = 30.0
    memory_mb: int = 768
    output_chars: int = 2_000_000
    concurrency: int = 2  # children at once, over all users

    @classmethod
    def from_settings(cls, settings: Settings) -> ParseLimits:
        return cls(cpu_seconds=settings.parse_cpu_seconds,
                   wall_seconds=settings.parse_wall_seconds,
                   memory_mb=settings.parse_memory_mb,
                   output_chars=settings.parse_output_chars,
                   concurrency=settings.parse_concurrency)


@dataclass(frozen=True)
class Parsed:
    text: str
    title: str = ""
    pages: int | None = None  # a PDF's page count
    pages_read: int = 0  # PDF pages begun (the last one may be cut)
    cut: Cut | None = None  # why the text stops early; None when it is whole
    limits: ParseLimits = field(default_factory=ParseLimits)

    def cut_note(self, what: str = "document") -> str:
        """One line for the user, or "" when the text is whole."""
        if self.cut is None:
            return ""
        why = {"time": f"reading it took too long (over {self.limits.wall_seconds:g} s)",
               "cpu": f"reading it took too long (over {self.limits.cpu_seconds} s of CPU)",
               "memory": f"reading it needed too much memory (over {self.limits.memory_mb} MB)",
               "output": f"its text is longer than {self.limits.output_chars} characters"}
        where = ""
        if self.pages is not None:
            where = f" after {self.pages_read} of {self.pages} pages"
        return f"[the {what}'s text was cut{where}: {why[self.cut]}]"


class _Gates:
    """The global bound and one-per-user bound on children, for one event loop."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.all = asyncio.Semaphore(size)
        self.users: dict[str, tuple[asyncio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def enter(self, user_id: str) -> AsyncIterator[None]:
        lock, waiting = self.users.get(user_id, (asyncio.Lock(), 0))
        self.users[user_id] = (lock, waiting + 1)
        try:
            async with lock, self.all:
                yield
        finally:
            lock, waiting = self.users[user_id]
            if waiting == 1:
                del self.users[user_id]
            else:
                self.users[user_id] = (lock, waiting - 1)


_GATES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Gates] = \
    weakref.WeakKeyDictionary()


def _gates(size: int) -> _Gates:
    loop = asyncio.get_running_loop()
    gates = _GATES.get(loop)
    if gates is None or gates.size != size:
        gates = _GATES[loop] = _Gates(size)
    return gates


async def parse(kind: Kind, data: bytes, *, user_id: str, limits: ParseLimits,
                max_pages: int = 300, url: str | None = None,
                charset: str | None = None) -> Parsed:
    """The text of ``data`` (a PDF, an HTML page or an HTML mail body), read in a child."""
    request: dict[str, object] = {"kind": kind, "max_pages": max_pages, "url": url,
                                  "charset": charset}
    async with _gates(limits.concurrency).enter(user_id):
        return await _run(request, data, limits)


@dataclass
class _Reading:
    pieces: list[str] = field(default_factory=list)
    chars: int = 0
    title: str = ""
    pages: int | None = None
    pages_read: int = 0
    refused: str | None = None
    cut: Cut | None = None
    done: bool = False


async def _run(request: dict[str, object], data: bytes, limits: ParseLimits) -> Parsed:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-I", str(CHILD), "--cpu", str(limits.cpu_seconds),
        "--memory", str(limits.memory_mb * 1024 * 1024), "--parent", str(os.getpid()),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, start_new_session=True, close_fds=True,
    )
    reading = _Reading()
    feeding = asyncio.ensure_future(_feed(process, request, data))
    draining = asyncio.ensure_future(_tail(process))
    try:
        try:
            async with asyncio.timeout(limits.wall_seconds):
                await _collect(process, reading, limits)
        except TimeoutError:
            reading.cut = "time"
        if not reading.done:
            _kill(process)
        status = await process.wait()
        with contextlib.suppress(TimeoutError):  # its pipe closed with it: EOF is near
            await asyncio.wait_for(asyncio.shield(draining), 10)
    finally:
        if process.returncode is None:  # cancelled: never leave a child or a zombie behind
            _kill(process)
            await asyncio.shield(process.wait())
        feeding.cancel()
        draining.cancel()
    return _outcome(reading, status, _result(draining), limits)


def _outcome(reading: _Reading, status: int, stderr: bytes, limits: ParseLimits) -> Parsed:
    if reading.refused is not None:
        raise ParseRefused(reading.refused)
    if reading.cut is None and not reading.done:
        if status == -signal.SIGXCPU:
            reading.cut = "cpu"
        elif status == child.MEMORY_EXIT or b"MemoryError" in stderr:
            reading.cut = "memory"
        else:
            log.warning("parser child ended with status %s: %s", status, stderr[-2000:])
            how = f"signal {-status}" if status < 0 else f"exit status {status}"
            raise ParserCrashed(f"the parser stopped unexpectedly ({how})")
    return Parsed(text="".join(reading.pieces), title=reading.title, pages=reading.pages,
                  pages_read=reading.pages_read, cut=reading.cut, limits=limits)


async def _collect(process: asyncio.subprocess.Process, reading: _Reading,
                   limits: ParseLimits) -> None:
    assert process.stdout is not None
    while True:
        try:
            head = await process.stdout.readexactly(child.HEADER.size)
        except asyncio.IncompleteReadError:
            return  # the child ended: its status says how
        kind, size = child.HEADER.unpack(head)
        if size > child.MAX_FRAME:
            raise ParserCrashed("the parser sent an oversized piece")
        try:
            payload = await process.stdout.readexactly(size)
        except asyncio.IncompleteReadError:
            return
        if kind == b"P":
            if _take(reading, payload.decode("utf-8", errors="replace"), limits):
                return
        elif kind == b"M":
            facts = json.loads(payload)
            reading.pages = facts.get("pages", reading.pages)
            reading.pages_read = facts.get("page", reading.pages_read)
            reading.title = str(facts.get("title", reading.title))
        elif kind == b"R":
            reading.refused = payload.decode("utf-8", errors="replace")
            return
        elif kind == b"C":
            reading.cut = "memory"
            return
        elif kind == b"D":
            reading.done = True
            return


def _take(reading: _Reading, text: str, limits: ParseLimits) -> bool:
    """Keep ``text``; True once the output cap is reached."""
    room = limits.output_chars - reading.chars
    if len(text) > room:
        text = text[:room]
        reading.cut = "output"
    reading.pieces.append(text)
    reading.chars += len(text)
    return reading.cut is not None


async def _feed(process: asyncio.subprocess.Process, request: dict[str, object],
                data: bytes) -> None:
    assert process.stdin is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        process.stdin.write(json.dumps(request).encode() + b"\n")
        process.stdin.write(data)
        await process.stdin.drain()
        process.stdin.close()
        await process.stdin.wait_closed()


async def _tail(process: asyncio.subprocess.Process) -> bytes:
    """The end of the child's stderr (read as it comes so the pipe never fills)."""
    assert process.stderr is not None
    kept = b""
    while chunk := await process.stderr.read(65536):
        kept = (kept + chunk)[-8192:]
    return kept


def _result(task: asyncio.Future[bytes]) -> bytes:
    if task.done() and not task.cancelled() and task.exception() is None:
        return task.result()
    return b""


def _kill(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)  # its own session: nothing it forked survives
