"""Every test gets its own IRIS_HOME and a clean Iris environment."""

from __future__ import annotations

import os
import platform
import tempfile
from pathlib import Path

# Libraries that start a process once per process for what it runs on: croniter's import runs
# `file` on the interpreter (croniter.is_32bit -> platform.architecture), and the OpenAI SDK's
# first request runs `uname -p` (platform.platform -> uname().processor, then cached). Both
# happen here, before any test, so that `make check`'s guard against processes never meets
# them in whichever test happens to come first.
import croniter  # noqa: F401  (imported for that side effect)
import pytest

platform.platform()
platform.platform(terse=True)
platform.uname().processor  # noqa: B018  (computed now, then cached by the platform module)

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# Turns embed inline in tests, not in an indexing child per runtime (the default, `process`):
# the child would be a process started by unit tests that `make check` runs without
# processes, ~180 MiB and an encoder load each, alive until its runtime is closed or
# collected (a cycle: often minutes in a long run). Set at import, as module-scoped stacks are
# built before the autouse ``iris_home``. tests/core/search/test_indexer*.py run the child.
os.environ["IRIS_SEARCH_INDEXER"] = "inline"
# The embedding model (88 MB extracted) is extracted once per machine for the whole suite,
# not into each test's IRIS_HOME: per home, a run wrote ~20 GB (every `iris dev` child and
# test process its own copy) and CI's disk filled at 91% of the first pass. Extraction is safe
# across processes (core.search.encoder.model_dir: private directory, then one rename).
EMBED_CACHE = str(Path(tempfile.gettempdir()) / f"iris-tests-{os.getuid()}" / "models")
os.environ["IRIS_EMBED_CACHE"] = EMBED_CACHE

pytest_plugins = ["tests.fakes.s3", "tests.fakes.hrana_fixtures", "tests.markers"]

# Property tests draw the same examples on every run, so CI never goes red on a lucky draw;
# HYPOTHESIS_PROFILE=explore draws fresh ones (and more) to look for new failures.
from hypothesis import settings as _hypothesis  # noqa: E402

_hypothesis.register_profile("ci", derandomize=True)
_hypothesis.register_profile("explore", max_examples=500)
_hypothesis.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def iris_home(tmp_path, monkeypatch):
    for name in list(os.environ):
        if name.startswith("IRIS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("IRIS_EMBED_CACHE", EMBED_CACHE)
    home = tmp_path / "iris-home"
    home.mkdir(mode=0o700)  # as Iris makes it (core.private)
    monkeypatch.setenv("IRIS_HOME", str(home))
    # Titles cost a side-model call after a first exchange, which would eat scripted replies
    # meant for the next turn; tests/core/sessions/test_titles.py turns them on.
    monkeypatch.setenv("IRIS_SESSION_TITLES", "false")
    # Same for memory reviews; tests/core/memory/test_review.py turns them on.
    monkeypatch.setenv("IRIS_MEMORY_REVIEW_EVERY", "0")
    monkeypatch.setenv("IRIS_MEMORY_REVIEW_AT_SESSION_END", "false")
    # Tests are one trusted operator: local commands run as plain subprocesses unless a test
    # asks for bubblewrap (tests/sandboxes/test_isolation.py, tests/test_e2e_security.py).
    monkeypatch.setenv("IRIS_SANDBOX_ISOLATION", "none")
    # Vectors inline, as above (the default `process` has its own tests).
    monkeypatch.setenv("IRIS_SEARCH_INDEXER", "inline")
    return home


@pytest.fixture
def settings(iris_home, db_backend):
    """Settings from the environment; ``db_backend`` (tests/fakes/hrana_fixtures.py) may point
    the database at the Hrana server."""
    from core.config import load_settings

    return load_settings()


@pytest.fixture
def clock():
    """The store's clock: the system clock, unless a module fixes time with a ManualClock."""
    from core.clock import SYSTEM_CLOCK

    return SYSTEM_CLOCK


@pytest.fixture
def store(settings, clock):
    from core.store import open_store

    opened = open_store(settings, clock=clock)
    yield opened
    opened.close()


@pytest.fixture
def scripted():
    from iris_testing.scripted_model import ScriptedModel

    return ScriptedModel()


@pytest.fixture
def runtime(settings, store, scripted):
    """A runtime with the local dispatcher and the scripted model."""
    from pydantic import SecretStr

    from functions.dispatch import LocalDispatcher
    from functions.runtime import compose
    from iris_testing.scripted_model import FixedRouter

    dispatcher = LocalDispatcher()
    configured = settings.model_copy(update={"api_key": SecretStr("test-key"),
                                             "admin_api_key": SecretStr("admin-key")})
    rt = compose(configured, dispatcher=dispatcher, store=store, router=FixedRouter(scripted))
    yield rt
    rt.close()  # its indexing child, if a turn started one


# A native crash (a segmentation fault in some C or Rust extension) kills pytest without a
# report. With IRIS_TEST_CRASH_LOG set (.ci/run sets it), every thread's stack goes to that file
# instead of stderr and the running test's id to ``<file>.test``, so .ci/run can say which test
# was running and which thread crashed.
# Under pytest-xdist each worker writes its own pair, ``<file>.<worker>`` (gw0, gw1, ...).
_CRASH_LOG = os.environ.get("IRIS_TEST_CRASH_LOG")
if _CRASH_LOG and os.environ.get("PYTEST_XDIST_WORKER"):
    _CRASH_LOG = f"{_CRASH_LOG}.{os.environ['PYTEST_XDIST_WORKER']}"


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    if _CRASH_LOG:
        import faulthandler

        config._iris_crash_file = open(_CRASH_LOG, "w")  # noqa: SIM115 (open until the crash)
        faulthandler.enable(config._iris_crash_file, all_threads=True)


def pytest_runtest_logstart(nodeid, location):
    if _CRASH_LOG:
        with open(f"{_CRASH_LOG}.test", "w") as running:
            running.write(nodeid)
