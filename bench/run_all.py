"""Run every benchmark in bench/ one after another and print their figures.

Run: .venv/bin/python bench/run_all.py [name ...]   (names without .py; default: all)
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    wanted = set(sys.argv[1:])
    scripts = sorted(p for p in HERE.glob("*.py") if not p.name.startswith("_")
                     and p.name != "run_all.py")
    failed = []
    for script in scripts:
        if wanted and script.stem not in wanted:
            continue
        print(f"\n=== {script.stem} ===", flush=True)
        started = time.perf_counter()
        result = subprocess.run([sys.executable, script.name], cwd=HERE)
        print(f"({script.stem}: {time.perf_counter() - started:.0f} s)", flush=True)
        if result.returncode != 0:
            failed.append(script.stem)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
