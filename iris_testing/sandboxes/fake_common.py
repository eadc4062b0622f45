"""Pieces shared by the SDK fakes: call recording bound to the real SDK signatures, injected
faults, a state store, and a fake machine (a host directory standing for ``/``)."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import os
import shutil
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any


@dataclass
class Call:
    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


def bind(real: Callable[..., Any], call: Call) -> None:
    """Bind ``call`` to ``real``'s signature (standing in for an unbound ``self``/``cls``);
    a call the real SDK would refuse raises ``TypeError`` as the real call would."""
    signature = inspect.signature(real)
    params = list(signature.parameters.values())
    if not params:
        raise TypeError(f"{call.name}: the real SDK callable takes no parameters")
    if params[0].kind is inspect.Parameter.VAR_POSITIONAL and len(params) == 2:
        raise TypeError(f"{call.name}: the real signature is opaque ({signature})")
    lead = (None,) if params[0].name in ("self", "cls") else ()
    try:
        signature.bind(*lead, *call.args, **call.kwargs)
    except TypeError as exc:
        raise TypeError(
            f"{call.name}{call.args}{call.kwargs} does not fit the real {signature}: {exc}"
        ) from None


@dataclass
class Recorder:
    """Records every SDK call; each is bound to the real SDK's signature as it is made, so
    every test (not one scenario) checks the adapters' calls against the installed SDK."""

    targets: dict[str, Callable[..., Any]] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    faults: dict[str, list[BaseException]] = field(default_factory=dict)

    def record(self, call_name: str, /, *args: Any, **kwargs: Any) -> None:
        call = Call(call_name, args, kwargs)
        real = self.targets.get(call_name)
        if real is None:
            raise AssertionError(f"the fake has no real SDK target for {call_name}")
        bind(real, call)
        self.calls.append(call)
        queued = self.faults.get(call_name)
        if queued:
            raise queued.pop(0)

    def fail(self, call_name: str, *errors: BaseException) -> None:
        """The next calls of ``call_name`` raise ``errors``, one each, after being recorded."""
        if call_name not in self.targets:
            raise AssertionError(f"unknown call {call_name}")
        self.faults.setdefault(call_name, []).extend(errors)

    def clear_faults(self) -> None:
        self.faults.clear()

    def names(self) -> list[str]:
        return [call.name for call in self.calls]

    def named(self, name: str) -> list[Call]:
        return [call for call in self.calls if call.name == name]

    def clear(self) -> None:
        self.calls.clear()


class MemoryStateStore:
    def __init__(self) -> None:
        self.data: dict[tuple[str, str], dict[str, str]] = {}
        self.writes: list[tuple[str, str, dict[str, str]]] = []

    def get_sandbox_state(self, user_id: str, backend: str) -> dict[str, str] | None:
        stored = self.data.get((user_id, backend))
        return dict(stored) if stored is not None else None

    def put_sandbox_state(self, user_id: str, backend: str, state: dict[str, str]) -> None:
        self.data[(user_id, backend)] = dict(state)
        self.writes.append((user_id, backend, dict(state)))


def aio(fn: Any) -> SimpleNamespace:
    """Expose an async function as ``x.aio(...)``, the way synchronicity does."""
    return SimpleNamespace(aio=fn)


_ids = itertools.count(1)


def next_id(prefix: str) -> str:
    return f"{prefix}-{next(_ids)}"


class Container:
    """A fake machine: a host directory standing for ``/`` inside the sandbox.

    Commands run on the host (there is no chroot): only the working directory and ``HOME``
    are mapped into the machine's directory; other absolute paths in a command are the host's.
    """

    def __init__(self, root: Path, home: str) -> None:
        self.root = root
        self.home = home
        self.root.mkdir(parents=True, exist_ok=True)

    def host(self, path: str) -> Path:
        return self.root / path.lstrip("/")

    def env(self, extra: dict[str, Any] | None) -> dict[str, str]:
        env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": self.home}
        env.update({k: v for k, v in (extra or {}).items() if v is not None})
        env["HOME"] = str(self.host(env["HOME"]))
        return env

    def copy_to(self, destination: Path) -> None:
        shutil.copytree(self.root, destination, symlinks=True)

    def size(self) -> int:
        return sum(p.stat().st_size for p in self.root.rglob("*") if p.is_file())

    async def run(
        self, argv: list[str], workdir: Path, env: dict[str, str], timeout: float | None,
        sink: Callable[[int, bytes], None] | None = None,
    ) -> tuple[bytes, bytes, int | None]:
        """Run ``argv``; ``None`` as the exit code means the timeout expired, and the output
        is what the command wrote until then. ``sink(fd, chunk)`` gets each chunk as it is
        read (fd 1 stdout, 2 stderr) and ``sink(fd, b"")`` at each stream's end."""
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        assert proc.stdout is not None and proc.stderr is not None
        out, err = bytearray(), bytearray()

        async def drain(stream: asyncio.StreamReader, into: bytearray, fd: int) -> None:
            while chunk := await stream.read(65536):
                into.extend(chunk)
                if sink is not None:
                    sink(fd, chunk)
            if sink is not None:
                sink(fd, b"")

        readers = asyncio.gather(
            drain(proc.stdout, out, 1), drain(proc.stderr, err, 2), proc.wait()
        )
        try:
            await asyncio.wait_for(asyncio.shield(readers), timeout)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await readers
            return bytes(out), bytes(err), None
        return bytes(out), bytes(err), proc.returncode

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
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            return out, None
        return out, proc.returncode
