"""Every cell of the sandbox fault grid is green (see iris_testing/sandboxes/fault_grid.py; the
table is printed by ``python bench/sandbox_faults.py`` and kept in docs/benchmarks.md)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from iris_testing.sandboxes.fault_grid import BACKENDS, FAILURES, OPERATIONS, run_cell

pytestmark = pytest.mark.process  # its tools run shells or processes


@pytest.mark.parametrize("failure", FAILURES)
@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_the_users_files_survive(tmp_path: Path, backend: str, operation: str,
                                 failure: str) -> None:
    cell = asyncio.run(run_cell(backend, operation, failure, tmp_path))
    assert cell.green, f"{backend} {operation} × {failure}: {cell.outcome}; {cell.problems}"
    if cell.outcome == "told: starts empty":
        assert (operation, failure) == ("restore", "not found")
