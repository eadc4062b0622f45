"""Fixtures building each sandbox backend over real directories (Modal and Daytona faked)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from sandboxes import Sandbox, SandboxOptions
from sandboxes.daytona_backend import DaytonaSandbox
from sandboxes.local import LocalSandbox
from sandboxes.modal_backend import ModalSandbox
from tests.sandboxes.fakes import FakeDaytona, FakeModal, MemoryStateStore


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Backend:
    name: str
    make: Callable[..., Sandbox]
    separate_stderr: bool
    hibernates: bool
    state: MemoryStateStore
    fake: FakeModal | FakeDaytona | None = None


def _local(tmp_path: Path) -> Backend:
    home = tmp_path / "home"
    state = MemoryStateStore()

    def make(user_id: str = "alice", options: SandboxOptions | None = None) -> Sandbox:
        return LocalSandbox(user_id, home=home, state=state, options=options)

    return Backend("local", make, separate_stderr=True, hibernates=False, state=state)


def _modal(tmp_path: Path) -> Backend:
    fake = FakeModal(tmp_path / "modal")
    state = MemoryStateStore()

    def make(user_id: str = "alice", options: SandboxOptions | None = None) -> Sandbox:
        return ModalSandbox(user_id, state=state, options=options, sdk=fake)

    return Backend("modal", make, separate_stderr=True, hibernates=True, state=state, fake=fake)


def _daytona(tmp_path: Path) -> Backend:
    fake = FakeDaytona(tmp_path / "daytona")
    state = MemoryStateStore()

    def make(user_id: str = "alice", options: SandboxOptions | None = None) -> Sandbox:
        return DaytonaSandbox(user_id, state=state, options=options, sdk=fake)

    return Backend("daytona", make, separate_stderr=True, hibernates=True, state=state, fake=fake)


BUILDERS = {"local": _local, "modal": _modal, "daytona": _daytona}


@pytest.fixture(params=sorted(BUILDERS))
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    return BUILDERS[request.param](tmp_path)


@pytest.fixture
def fake_modal(tmp_path: Path) -> Backend:
    return _modal(tmp_path)


@pytest.fixture
def fake_daytona(tmp_path: Path) -> Backend:
    return _daytona(tmp_path)


async def until(condition: Callable[[], object], what: str) -> None:
    """``iris_testing.waiting.until``: ``condition`` holds, or a failure naming ``what``."""
    from iris_testing.waiting import until as waiting_until

    await waiting_until(condition, what)


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, ended but not yet reaped, does not)."""
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
