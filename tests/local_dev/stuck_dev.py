"""``iris dev`` with one more prompt section that blocks: it notes that it started, then opens a
FIFO nobody writes to (a thread stuck in a system call, as a hostile file would make one).
Run as ``python -m tests.local_dev.stuck_dev FIFO dev --port P`` by test_dev_sigterm.py."""

from __future__ import annotations

import sys
from pathlib import Path

import local_dev.emulator as emulator_module
from core.config import Settings
from local_dev.cli import cli
from local_dev.emulator import Emulator


def main() -> None:
    fifo = Path(sys.argv[1])
    build = emulator_module.build_emulator

    def stuck_section(inputs: object) -> str:
        fifo.with_suffix(".opening").touch()
        with fifo.open() as blocked:  # blocks until a writer comes: none does
            return blocked.read()

    def build_stuck(settings: Settings) -> Emulator:
        emulator = build(settings)
        emulator.runtime.sections = [*emulator.runtime.sections, stuck_section]
        return emulator

    emulator_module.build_emulator = build_stuck
    cli(args=sys.argv[2:], prog_name="iris")


if __name__ == "__main__":
    main()
