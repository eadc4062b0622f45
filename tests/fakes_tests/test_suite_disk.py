"""The suite's own disk footprint: CI's first pass once died at 91% with "No space left on
device" after every `iris dev` child and test extracted its own 88 MB copy of the embedding
model into its IRIS_HOME (~20 GB a run), and pytest kept every passing test's directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EMBED_CACHE

PRINT_MODEL_DIR = (
    "from core.search.embed import cache_dir\n"
    "from core.search.encoder import model_dir\n"
    "print(model_dir(cache_dir()))\n"
)


def test_a_child_extracts_the_model_into_the_suites_cache_not_its_home(iris_home: Path) -> None:
    """A child started as the end-to-end tests start `iris dev` (the test's environment)
    finds the model in the one cache of the suite and writes nothing under its home."""
    out = subprocess.run([sys.executable, "-c", PRINT_MODEL_DIR], env=dict(os.environ),
                         cwd=Path(__file__).resolve().parents[2], capture_output=True,
                         text=True, timeout=120, check=True)
    folder = Path(out.stdout.strip())
    assert folder.is_relative_to(EMBED_CACHE), folder
    assert (folder / "model.safetensors").is_file()
    assert not (iris_home / "cache").exists()


def test_a_passing_tests_directory_is_removed_when_it_ends(request: pytest.FixtureRequest) -> None:
    assert request.config.getini("tmp_path_retention_policy") == "failed"
