"""Start the Hrana test server (``tests/fakes/hrana_server.py``) as a child process and drive it.

    with hrana_server(tmp_path / "remote.db") as server:
        conn = libsql.connect(server.url, auth_token=server.token)
        server.inject(FaultRule("fail", rate=0.05))
        server.stats()["round_trips"]

With ``db_dir=``, ``server.database_url("name")`` is a fresh database per name.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx

from iris_testing.waiting import WaitTimeout, wait_until
from tests.fakes.hrana_server import FaultRule

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "hrana-test-token"


@dataclass
class HranaProcess:
    url: str
    token: str
    db_path: Path | None
    process: subprocess.Popen[str]

    def database_url(self, name: str) -> str:
        """The URL of database ``name`` (the server must have been started with ``db_dir``)."""
        return f"{self.url}/db/{name}"

    def _control(self, method: str, path: str, body: Any = None) -> Any:
        response = httpx.request(method, f"{self.url}/_fake/{path}", json=body, timeout=10)
        response.raise_for_status()
        return response.json()

    def stats(self) -> dict[str, int]:
        return self._control("GET", "stats")

    def reset(self) -> None:
        self._control("POST", "reset")

    def inject(self, *rules: FaultRule, delay: float = 0.0, seed: int = 0) -> None:
        """Replace the fault rules (none: no faults) and the fixed delay per request."""
        self._control("POST", "faults", {"rules": [asdict(r) for r in rules], "delay": delay,
                                         "seed": seed})

    def faults(self) -> dict[str, Any]:
        return self._control("GET", "faults")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def start_hrana(db_path: Path | str | None = None, *, db_dir: Path | str | None = None,
                token: str = TOKEN, port: int = 0,
                stream_ttl: float = 10.0, busy_timeout: float = 5.0, log: Path | str | None = None,
                timeout: float = 20.0) -> HranaProcess:
    command = [sys.executable, "-m", "tests.fakes.hrana_server", "--port", str(port),
               "--stream-ttl", str(stream_ttl), "--busy-timeout", str(busy_timeout)]
    if db_path:
        command += ["--db", str(db_path)]
    if db_dir:
        command += ["--dir", str(db_dir)]
    if token:
        command += ["--token", token]
    if log:
        command += ["--log", str(log)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    lines: list[str] = []

    def spoke() -> bool:  # its first line, or its end (reported below, with its stderr)
        if selector.select(timeout=0):
            lines.append(process.stdout.readline())  # type: ignore[union-attr]
            return True
        return process.poll() is not None

    with suppress(WaitTimeout):
        wait_until(spoke, "the Hrana server's first line", timeout=timeout)
    selector.close()
    line = lines[0] if lines else ""
    if not line.startswith("hrana listening on "):
        process.kill()
        _, err = process.communicate(timeout=10)
        raise RuntimeError(f"the Hrana server did not start: {line!r} {err}")
    url = line.removeprefix("hrana listening on ").strip()
    return HranaProcess(url=url, token=token, db_path=Path(db_path) if db_path else None,
                        process=process)


@contextmanager
def hrana_server(db_path: Path | str | None = None, **options: Any) -> Iterator[HranaProcess]:
    server = start_hrana(db_path, **options)
    try:
        yield server
    finally:
        server.stop()
