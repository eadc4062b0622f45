"""pytest plugin: storage tests run twice, on a ``file:`` database and through the Hrana server.

The tests under ``BOTH_BACKENDS`` are parametrized with ``db_backend`` (ids ``file`` and
``hrana``); for ``hrana`` the ``settings`` fixture (and so ``store``) points ``IRIS_DB_URL`` at a
fresh database of one Hrana server process started once per session on loopback. Child
processes a test starts inherit the same environment. ``db_url`` gives a test that opens
``Database`` itself a fresh database on its backend. ``IRIS_TEST_BACKENDS=file`` runs the file
backend only.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator

import pytest

from tests.fakes.hrana import HranaProcess, start_hrana

BOTH_BACKENDS = (
    "tests/core/store/test_db.py",
    "tests/core/store/test_repositories.py",
    "tests/core/memory/test_repository.py",
    "tests/core/memory/test_concurrency.py",
    "tests/core/event_hooks/test_store.py",
    # Claims, not the schedule arithmetic (a tick per minute over days: every form and DST
    # case is the same SQL and would cost ~30 s through Hrana).
    *(f"tests/core/scheduler/test_claims.py::test_{name}" for name in (
        "a_one_shot_fires_once_and_finishes", "repeat_count_stops_the_job",
        "pause_stops_runs_and_resume_skips_the_missed_slots",
        "a_job_missed_while_nothing_ticked_runs_once",
        "a_run_still_going_makes_the_next_one_wait_then_run_once",
        "the_same_slot_is_claimed_once", "a_manual_run_leaves_the_schedule_and_repeat_count_alone",
        "removed_jobs_never_run_and_keep_their_history",
    )),
    "tests/functions/test_cron.py::test_two_tick_processes_at_the_same_moment_run_each_job_once",
)
_names = itertools.count(1)


def _backends() -> list[str]:
    chosen = os.environ.get("IRIS_TEST_BACKENDS", "file,hrana")
    return [b for b in ("file", "hrana") if b in chosen.split(",")]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    node = metafunc.definition.nodeid
    wanted = metafunc.definition.get_closest_marker("both_backends") is not None
    if wanted or any(node == p or node.startswith((f"{p}[", f"{p}::")) for p in BOTH_BACKENDS):
        if "db_backend" not in metafunc.fixturenames:  # a test that builds its own settings
            metafunc.fixturenames.append("db_backend")
        backends = _backends()
        metafunc.parametrize("db_backend", backends, indirect=True, ids=backends)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "both_backends: run on a file: database and through the Hrana server"
    )


@pytest.fixture(scope="session")
def hrana(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HranaProcess]:
    """One Hrana server for the session; ``hrana.database_url(name)`` is a fresh database."""
    server = start_hrana(db_dir=tmp_path_factory.mktemp("hrana"), stream_ttl=5.0)
    try:
        yield server
    finally:
        server.stop()


def fresh_hrana_url(server: HranaProcess) -> str:
    return server.database_url(f"t{os.getpid()}x{next(_names)}")


@pytest.fixture
def db_backend(request: pytest.FixtureRequest, iris_home, monkeypatch: pytest.MonkeyPatch) -> str:
    """``file`` unless the test is parametrized; ``hrana`` points IRIS_DB_URL at the server."""
    backend = getattr(request, "param", "file")
    if backend == "hrana":
        server: HranaProcess = request.getfixturevalue("hrana")
        monkeypatch.setenv("IRIS_DB_URL", fresh_hrana_url(server))
        monkeypatch.setenv("IRIS_DB_AUTH_TOKEN", server.token)
    return backend


@pytest.fixture
def db_url(db_backend: str, request: pytest.FixtureRequest, tmp_path) -> str:
    """A fresh database on the test's backend (its token: ``hrana.token``)."""
    if db_backend == "hrana":
        return fresh_hrana_url(request.getfixturevalue("hrana"))
    return f"file:{tmp_path / 'a.db'}"
