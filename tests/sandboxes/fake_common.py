"""Pieces shared by the SDK fakes: call recording, a state store, and a fake machine."""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any


@dataclass
class Call:
    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


@dataclass
class Recorder:
    calls: list[Call] = field(default_factory=list)

    def record(self, call_name: str, /, *args: Any, **kwargs: Any) -> None:
        self.calls.append(Call(call_name, args, kwargs))

    def names(self) -> list[str]:
        return [call.name for call in self.calls]

    def named(self, name: str) -> list[Call]:
        return [call for call in self.calls if call.name == name]

    def clear(self) -> None:
        self.calls.clear()


class MemoryStateStore:
    def __init__(self) -> None:
        self.data: dict[tuple[str, str], dict[str, str]] = {}

    def get_sandbox_state(self, user_id: str, backend: str) -> dict[str, str] | None:
        stored = self.data.get((user_id, backend))
        return dict(stored) if stored is not None else None

    def put_sandbox_state(self, user_id: str, backend: str, state: dict[str, str]) -> None:
        self.data[(user_id, backend)] = dict(state)


def aio(fn: Any) -> SimpleNamespace:
    """Expose an async function as ``x.aio(...)``, the way synchronicity does."""
    return SimpleNamespace(aio=fn)


_ids = itertools.count(1)


def next_id(prefix: str) -> str:
    return f"{prefix}-{next(_ids)}"


class Container:
    """A fake machine: a host directory standing for ``/`` inside the sandbox."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)

    def host(self, path: str) -> Path:
        return self.root / path.lstrip("/")

    def env(self, workdir: Path, extra: dict[str, Any] | None) -> dict[str, str]:
        env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(workdir)}
        env.update({k: v for k, v in (extra or {}).items() if v is not None})
        return env

    def copy_to(self, destination: Path) -> None:
        shutil.copytree(self.root, destination, symlinks=True)

    async def run(
        self, argv: list[str], workdir: Path, env: dict[str, str], timeout: float | None
    ) -> tuple[bytes, bytes, int | None]:
        """Run ``argv``; ``None`` as the exit code means the timeout expired."""
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(), timeout)
        except TimeoutError:
            os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
            return b"", b"", None
        return out, err, proc.returncode

    def run_blocking(
        self, argv: list[str], workdir: Path, env: dict[str, str], timeout: float | None
    ) -> tuple[bytes, int | None]:
        """Run ``argv`` with stderr merged into stdout; ``None`` means the timeout expired."""
        proc = subprocess.Popen(
            argv,
            cwd=workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return b"", None
        return out, proc.returncode
