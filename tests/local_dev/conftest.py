"""Fixtures shared by the local_dev tests that run real `iris` processes."""

import os
import signal
from pathlib import Path

import pytest

from iris_testing import procs, stand_in_model

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def stand_in_env(tmp_path, iris_home):
    """An environment for a real `iris run`/`iris dev` whose embedded model server runs the
    stand-in engine (iris_testing/stand_in_model.py), and the folder where each model server
    it starts leaves its pid; any still running at the end are killed."""
    stand_in = stand_in_model.install(tmp_path / "stand-in")
    environ = {k: v for k, v in os.environ.items() if not k.startswith("IRIS_")}
    environ.update({
        "IRIS_HOME": str(iris_home), "PYTHONPATH": os.pathsep.join([str(stand_in), str(ROOT)]),
        "IRIS_SANDBOX_ISOLATION": "none",
    })
    yield environ, stand_in / "pids"
    for pid in [int(p.name) for p in (stand_in / "pids").iterdir()]:
        if procs.running(pid):
            os.kill(pid, signal.SIGKILL)
