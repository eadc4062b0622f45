"""Every test gets its own IRIS_HOME and a clean Iris environment."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture(autouse=True)
def iris_home(tmp_path, monkeypatch):
    for name in list(os.environ):
        if name.startswith("IRIS_"):
            monkeypatch.delenv(name)
    home = tmp_path / "iris-home"
    home.mkdir()
    monkeypatch.setenv("IRIS_HOME", str(home))
    return home
