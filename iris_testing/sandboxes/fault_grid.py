"""The sandbox fault grid: per backend, each operation × each failure, run against the strict
SDK fakes, with what the user would see and whether their files and stored snapshot survived.

Each failure is put where the real SDK would raise it (see ``FAULTS``); the real situation is
staged where there is one (Modal ending a sandbox, Modal dropping an expired snapshot, Daytona
stopping or deleting a sandbox). A cell is green when the operation succeeded (at most after one
retry), timed out as a command should, or ended in a clear ``SandboxError``; the user's file
is still there afterwards; and no stored snapshot (Modal) or sandbox id (Daytona) was replaced
by an empty workspace's. The one exception is a snapshot or sandbox the provider no longer has:
then the workspace starts empty and the user is told (``WorkspaceLost``).

``python bench/sandbox_faults.py`` prints the table; ``tests/sandboxes/test_fault_grid.py``
asserts every cell is green.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import modal.exception as modal_errors
from daytona.common import errors as daytona_errors

from iris_testing.sandboxes.fake_common import MemoryStateStore
from iris_testing.sandboxes.fake_daytona import FakeDaytona
from iris_testing.sandboxes.fake_modal import FakeModal
from sandboxes import SandboxError, WorkspaceLost
from sandboxes.daytona_backend import DaytonaSandbox
from sandboxes.modal_backend import ModalSandbox

BACKENDS = ("modal", "daytona")
OPERATIONS = ("create", "exec", "read", "write", "hibernate", "restore", "resume")
FAILURES = ("transient", "not found", "ended", "timeout", "exhausted")
PRECIOUS = b"precious work"

MODAL_CALL = {
    "create": "Sandbox.create", "restore": "Sandbox.create", "exec": "Sandbox.exec",
    "read": "SandboxFilesystem.read_bytes", "write": "SandboxFilesystem.write_bytes",
    "hibernate": "Sandbox.snapshot_filesystem", "resume": "Sandbox.from_name",
}
DAYTONA_CALL = {
    "create": "Daytona.create", "restore": "Sandbox.start", "exec": "Process.create_session",
    "read": "FileSystem.download_file", "write": "FileSystem.upload_file",
    "hibernate": "Sandbox.stop", "resume": "Daytona.list",
}
PROXY = daytona_errors.SOURCE_PROXY


def modal_fault(op: str, failure: str) -> BaseException | str:
    """The exception Modal's SDK raises for ``failure`` at ``op``, or a staged situation."""
    e = modal_errors
    if failure == "transient":
        return e.ServiceError("UNAVAILABLE: connection reset")
    if failure == "not found":
        return "expire snapshot" if op == "restore" else e.NotFoundError("not found")
    if failure == "ended":
        if op in ("create", "restore"):
            return e.ConflictError("Sandbox already finished")  # ended while being scheduled
        return "end sandbox"
    if failure == "timeout":
        if op in ("create", "restore"):  # the SDK turns a scheduling timeout into this
            return e.ResourceExhaustedError("Insufficient capacity to create sandbox.")
        if op == "exec":
            return "slow command"
        if op == "hibernate":
            return "slow snapshot"
        if op == "resume":
            return e.ServiceError("DEADLINE_EXCEEDED")
        return e.TimeoutError("Timeout expired")
    return e.ResourceExhaustedError("RESOURCE_EXHAUSTED: rate limit")


def daytona_fault(op: str, failure: str) -> BaseException | str:
    """The exception Daytona's SDK raises for ``failure`` at ``op``, or a staged situation."""
    e = daytona_errors
    if failure == "transient":
        return e.DaytonaServiceUnavailableError("service unavailable", status_code=503,
                                                source=PROXY)
    if failure == "not found":
        if op == "restore":
            return "delete sandbox"
        return e.DaytonaNotFoundError("sandbox not found", status_code=404, source=PROXY)
    if failure == "ended":
        if op in ("create", "restore"):
            return e.DaytonaError("Sandbox entered error state: error, error reason: lost")
        return "stop sandbox"
    if failure == "timeout":
        if op == "exec":
            return "slow command"
        if op in ("read", "write", "resume"):
            return e.DaytonaConnectionTimeoutError("read timed out")
        return e.DaytonaTimeoutError("Sandbox failed to reach the state in 60 seconds")
    return e.DaytonaRateLimitError("rate limit exceeded", status_code=429)


@dataclass
class Cell:
    backend: str
    operation: str
    failure: str
    outcome: str
    files_kept: bool
    snapshot_kept: bool
    problems: list[str]

    @property
    def green(self) -> bool:
        return not self.problems

    def shown(self) -> str:
        mark = "✓" if self.green else "✗"
        return f"{mark} {self.outcome}"


class _Modal:
    def __init__(self, root: Path) -> None:
        self.fake = FakeModal(root)
        self.state = MemoryStateStore()
        self.calls = MODAL_CALL

    def make(self) -> Any:
        return ModalSandbox("alice", state=self.state, sdk=self.fake)

    def kept_id(self) -> str | None:
        return (self.state.get_sandbox_state("alice", "modal") or {}).get("image_id")

    def saved_ids_hold_the_file(self) -> bool:
        for _, _, written in self.state.writes:
            image = self.fake.images.get(written.get("image_id", ""))
            if image is None:
                continue
            # files is None only for the empty base image, which holds nothing
            if image.files is None or not (image.files / "workspace/notes.txt").is_file():
                return False
        return True

    def stage(self, situation: str, box: Any) -> None:
        if situation == "expire snapshot":
            self.fake.expire(self.kept_id() or "")
        elif situation == "end sandbox":
            self.fake.sandboxes[-1].end()
        elif situation == "slow snapshot":
            self.fake.snapshot_seconds = 10_000

    def clear(self) -> None:
        self.fake.recorder.clear_faults()
        self.fake.snapshot_seconds = 1.0


class _Daytona:
    def __init__(self, root: Path) -> None:
        self.fake = FakeDaytona(root)
        self.state = MemoryStateStore()
        self.calls = DAYTONA_CALL

    def make(self) -> Any:
        return DaytonaSandbox("alice", state=self.state, sdk=self.fake)

    def kept_id(self) -> str | None:
        return (self.state.get_sandbox_state("alice", "daytona") or {}).get("sandbox_id")

    def saved_ids_hold_the_file(self) -> bool:
        first = self.state.writes[0][2]["sandbox_id"] if self.state.writes else None
        return all(w[2]["sandbox_id"] == first for w in self.state.writes)

    def stage(self, situation: str, box: Any) -> None:
        records = self.fake.for_user("alice")
        if situation == "delete sandbox":
            self.fake.purge(records[0].id)
        elif situation == "stop sandbox":
            records[0].state = "stopped"

    def clear(self) -> None:
        self.fake.recorder.clear_faults()


async def _prepare(world: Any, op: str) -> Any:
    """A user with notes.txt saved; for exec, read, write and hibernate their sandbox runs."""
    box = world.make()
    if op == "create":
        return box
    await box.write_file("notes.txt", PRECIOUS)
    await box.hibernate()
    if isinstance(world, _Daytona) and op != "restore":
        await box.resume()
    if op in ("exec", "read", "write", "hibernate"):
        await box.resume()
        return box
    return world.make()  # a new process: nothing cached


def _action(op: str, failure: str) -> Callable[[Any], Awaitable[Any]]:
    if op == "exec" and failure == "timeout":
        return lambda box: box.exec("echo started; sleep 5", timeout=1)
    return {
        "create": lambda box: box.exec("echo hello"),
        "exec": lambda box: box.exec("cat notes.txt"),
        "read": lambda box: box.read_file("notes.txt"),
        "write": lambda box: box.write_file("new.txt", b"new"),
        "hibernate": lambda box: box.hibernate(),
        "restore": lambda box: box.exec("cat notes.txt"),
        "resume": lambda box: box.resume(),
    }[op]


async def run_cell(backend: str, op: str, failure: str, root: Path) -> Cell:
    world: Any = _Modal(root) if backend == "modal" else _Daytona(root)
    fault = (modal_fault if backend == "modal" else daytona_fault)(op, failure)
    box = await _prepare(world, op)
    kept_before = world.kept_id()
    recorder = world.fake.recorder
    if isinstance(fault, str):
        world.stage(fault, box)
    else:
        recorder.fail(world.calls[op], fault)
    recorder.clear()
    lost = False
    problems: list[str] = []
    try:
        result = await _action(op, failure)(box)
    except WorkspaceLost as exc:
        lost = True
        outcome = "told: starts empty"
        if not exc.reason:
            problems.append("no reason given")
    except SandboxError as exc:
        outcome = "clear error"
        if not str(exc).strip():
            problems.append("an empty error message")
    except Exception as exc:  # an SDK exception reaching the caller is a failure of the grid
        outcome = f"raw {type(exc).__name__}"
        problems.append(f"{type(exc).__name__} reached the caller: {exc}")
    else:
        tries = recorder.names().count(world.calls[op])
        if getattr(result, "timed_out", False):
            outcome = "timed out"
        else:
            outcome = "ok after 1 retry" if tries > 1 else "ok"
        if tries > 2:
            problems.append(f"{tries} tries")
    world.clear()
    after = world.make()
    try:
        files_kept = await after.read_file("notes.txt") == PRECIOUS
    except SandboxError:
        files_kept = False
    if op == "create":
        files_kept = True  # there were no files yet
    snapshot_kept = world.saved_ids_hold_the_file() and (
        kept_before is None or world.kept_id() is not None
    )
    if lost:
        expected_loss = op == "restore" and failure == "not found"
        if not expected_loss:
            problems.append("the workspace started empty though the provider still had it")
    else:
        if not files_kept:
            problems.append("the user's file is gone")
        if not snapshot_kept:
            problems.append("the stored snapshot or sandbox id was replaced")
    return Cell(backend, op, failure, outcome, files_kept, snapshot_kept, problems)


def run_grid(root: Path) -> list[Cell]:
    cells = []
    for backend in BACKENDS:
        for op in OPERATIONS:
            for failure in FAILURES:
                where = root / f"{backend}-{op}-{failure.replace(' ', '-')}"
                cells.append(asyncio.run(run_cell(backend, op, failure, where)))
    return cells


def table(cells: list[Cell]) -> str:
    lines = []
    for backend in BACKENDS:
        lines += [f"**{backend}**", "", "| operation | " + " | ".join(FAILURES) + " |",
                  "|---" * (len(FAILURES) + 1) + "|"]
        for op in OPERATIONS:
            row = [c.shown() for c in cells if (c.backend, c.operation) == (backend, op)]
            lines.append(f"| {op} | " + " | ".join(row) + " |")
        lines.append("")
    green = sum(c.green for c in cells)
    lines.append(f"{green} of {len(cells)} cells green.")
    return "\n".join(lines)
