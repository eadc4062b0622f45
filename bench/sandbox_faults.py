"""Print the sandbox fault grid (docs/benchmarks.md): per backend, each operation × each
failure, run against the strict Modal and Daytona SDK fakes.

    .venv/bin/python bench/sandbox_faults.py
"""

from __future__ import annotations

import logging
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from iris_testing.sandboxes.fault_grid import run_grid, table


def main() -> int:
    logging.disable(logging.CRITICAL)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as root:
        cells = run_grid(Path(root))
    print(table(cells))
    print(f"({len(cells)} cells in {time.perf_counter() - started:.1f} s)")
    for cell in cells:
        if not cell.green:
            print(f"✗ {cell.backend} {cell.operation} × {cell.failure}: {cell.problems}")
    return 0 if all(cell.green for cell in cells) else 1


if __name__ == "__main__":
    raise SystemExit(main())
