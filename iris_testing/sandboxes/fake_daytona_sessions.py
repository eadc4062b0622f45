"""The session side of the fake ``daytona`` toolbox (see ``fake_daytona``'s docstring).

A session is a directory of logs and the commands started in it; each command is a real
``bash -c`` process in its own process group (the daemon's session shell is one too), writing
stdout and stderr to files that are read back as they stand.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from daytona.common import errors
from daytona.common.process import SessionCommandLogsResponse, SessionExecuteResponse
from daytona_toolbox_api_client import Command

from iris_testing.sandboxes.fake_common import Container

DAEMON = errors.SOURCE_DAEMON
MACHINE_PATHS = ("/home/daytona", "/tmp/iris-home")
TERMINATION_GRACE = 5.0


@dataclass
class FakeCommand:
    id: str
    command: str
    process: subprocess.Popen[bytes]
    out: Path
    err: Path

    def exit_code(self) -> int | None:
        code = self.process.poll()
        if code is None:
            return None
        return code if code >= 0 else 128 - code  # as the session's `echo "$?"` reports it


@dataclass
class FakeSession:
    id: str
    dir: Path
    commands: dict[str, FakeCommand] = field(default_factory=dict)

    def end(self) -> None:
        """TERM the process groups, KILL what is left after the grace, remove the logs."""
        for command in self.commands.values():
            if command.process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(command.process.pid, signal.SIGTERM)
                try:
                    command.process.wait(TERMINATION_GRACE)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(command.process.pid, signal.SIGKILL)
                    command.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def localise(container: Container, text: str) -> str:
    """Map the machine paths the fake knows, in ``text``, into the machine's directory."""
    pattern = "|".join(re.escape(p) for p in MACHINE_PATHS)
    return re.sub(rf"({pattern})(?=[/'\"\s;]|$)", lambda m: str(container.host(m[1])), text)


def _missing(what: str) -> errors.DaytonaNotFoundError:
    return errors.DaytonaNotFoundError(f"{what} not found", status_code=404, source=DAEMON)


class Sessions:
    """The sessions of one sandbox's toolbox."""

    def __init__(self, root: Path, container: Container, work_dir: str) -> None:
        self._root = root
        self._container = container
        self._work_dir = work_dir
        self.open: dict[str, FakeSession] = {}

    def create(self, session_id: str) -> None:
        if session_id in self.open:
            raise errors.DaytonaConflictError(
                "session already exists", status_code=409, source=DAEMON
            )
        directory = self._root / session_id
        directory.mkdir(parents=True)
        self.open[session_id] = FakeSession(session_id, directory)

    def _session(self, session_id: str) -> FakeSession:
        session = self.open.get(session_id)
        if session is None:
            raise _missing("session")
        return session

    def execute(self, session_id: str, req: Any) -> Any:
        session = self._session(session_id)
        command_id = str(uuid.uuid4())
        out, err = session.dir / f"{command_id}.out", session.dir / f"{command_id}.err"
        container = self._container
        with out.open("wb") as stdout, err.open("wb") as stderr:
            process = subprocess.Popen(
                ["bash", "-c", localise(container, req.command)],
                cwd=container.host(self._work_dir),
                env=container.env(None),
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                start_new_session=True,
            )
        command = FakeCommand(command_id, req.command, process, out, err)
        session.commands[command_id] = command
        if req.run_async:
            return SessionExecuteResponse(cmd_id=command_id)
        process.wait()
        logs = self.logs(session_id, command_id)
        return SessionExecuteResponse(
            cmd_id=command_id, output=logs.output, stdout=logs.stdout, stderr=logs.stderr,
            exit_code=command.exit_code(),
        )

    def _command(self, session_id: str, command_id: str) -> FakeCommand:
        command = self._session(session_id).commands.get(command_id)
        if command is None:
            raise _missing("command")
        return command

    def command(self, session_id: str, command_id: str) -> Any:
        command = self._command(session_id, command_id)
        return Command(id=command.id, command=command.command, exit_code=command.exit_code())

    def logs(self, session_id: str, command_id: str) -> Any:
        command = self._command(session_id, command_id)
        stdout = command.out.read_bytes().decode("utf-8", errors="replace")
        stderr = command.err.read_bytes().decode("utf-8", errors="replace")
        return SessionCommandLogsResponse(output=stdout + stderr, stdout=stdout, stderr=stderr)

    def delete(self, session_id: str) -> None:
        self._session(session_id).end()
        del self.open[session_id]

    def end_all(self) -> None:
        for session in self.open.values():
            session.end()
        self.open.clear()
