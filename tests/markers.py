"""pytest plugin: the suite's markers, given by what a test does, and a guard that proves them.

``browser``: drives a real headless Chromium (the dashboard's browser tests).
``process``: starts real processes: subprocesses (the CLI, sandboxes' shells, MCP stdio servers,
    worker processes) or the Hrana server. Found from the module's source (it names a way to
    start one) or its ``hrana`` parameter; a module the source does not give away says
    ``pytestmark = pytest.mark.process``.
``e2e``: end to end through the emulator or the CLI (tests/test_e2e_*.py).
``slow``: seconds of CPU on its own, given by hand (the slowest of what would otherwise be in
    ``make check``, from its ``--durations``).

``make check`` runs ``-m "not browser and not process and not e2e and not slow"`` with
``IRIS_TEST_NO_PROCESSES=1``: there, any test that starts a process fails, naming the marker
it lacks, so the fast subset cannot quietly grow slow.
"""

from __future__ import annotations

import multiprocessing.util
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

MARKERS = {
    "browser": "drives a real headless Chromium; `make check` leaves it out",
    "process": "starts real processes (subprocesses, the Hrana server); `make check` leaves "
               "it out",
    "e2e": "end to end through the emulator or the CLI; `make check` leaves it out",
    "slow": "seconds of CPU on its own (a whole corpus, a 100 KB linear-time sweep, thousands "
            "of property examples); `make check` leaves it out, `make test` runs it",
}
# Words in a test module that start processes (or the browser, or the Hrana server process).
_STARTS_PROCESSES = ("subprocess", "multiprocessing", "Popen", "spawn_tied", "start_hrana",
                     "hrana_server(", "create_subprocess", "playwright")
_GUARD = os.environ.get("IRIS_TEST_NO_PROCESSES") == "1"
_sources: dict[Path, str] = {}


def pytest_configure(config: pytest.Config) -> None:
    for name, meaning in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {meaning}")


def _source(path: Path) -> str:
    if path not in _sources:
        _sources[path] = path.read_text(encoding="utf-8", errors="replace")
    return _sources[path]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.fspath))
        if path.name.startswith("test_e2e_"):
            item.add_marker(pytest.mark.e2e)
        if "new_page" in getattr(item, "fixturenames", ()) or path.name.startswith(
                "test_browser"):
            item.add_marker(pytest.mark.browser)
        callspec = getattr(item, "callspec", None)
        hrana = callspec is not None and callspec.params.get("db_backend") == "hrana"
        if hrana or any(word in _source(path) for word in _STARTS_PROCESSES):
            item.add_marker(pytest.mark.process)


class _NoProcesses:
    """Every way to start a process refused, for the run of a test that claims to start none:
    ``subprocess`` (and asyncio's subprocesses), ``multiprocessing`` (spawn starts its
    children, and a forkserver itself, through ``spawnv_passfds``; fork through ``os.fork``) and
    ``os.posix_spawn``. An attempt fails the test at its end even when the code under test
    caught the error (an indexing child started from an after-turn step, whose failure is
    only logged)."""

    def __init__(self, nodeid: str) -> None:
        self.nodeid = nodeid
        self.attempts: list[str] = []

    def message(self) -> str:
        return (f"{self.nodeid} starts a process ({', '.join(self.attempts)}) but is not marked "
                "`process`: add `pytestmark = pytest.mark.process` to its module (make check "
                "runs without them)")

    def refusing(self, how: str) -> object:
        def refuse(*args: object, **kwargs: object) -> None:
            self.attempts.append(how)
            raise AssertionError(self.message())

        return refuse


def refuse_processes(nodeid: str, monkeypatch: pytest.MonkeyPatch) -> _NoProcesses:
    """Refuse every way to start a process until ``monkeypatch`` is undone."""
    guard = _NoProcesses(nodeid)
    monkeypatch.setattr(subprocess.Popen, "_execute_child", guard.refusing("subprocess"))
    monkeypatch.setattr(multiprocessing.util, "spawnv_passfds",
                        guard.refusing("multiprocessing"))
    monkeypatch.setattr(os, "fork", guard.refusing("os.fork"))
    monkeypatch.setattr(os, "posix_spawn", guard.refusing("os.posix_spawn"))
    monkeypatch.setattr(os, "posix_spawnp", guard.refusing("os.posix_spawnp"))
    return guard


@pytest.fixture(autouse=True)
def _no_processes_unless_marked(request: pytest.FixtureRequest,
                                monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    if not _GUARD or request.node.get_closest_marker("process") is not None:
        yield
        return
    guard = refuse_processes(request.node.nodeid, monkeypatch)
    yield
    if guard.attempts:
        pytest.fail(guard.message(), pytrace=False)
