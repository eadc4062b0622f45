"""Processes as Linux's /proc shows them: a process's children and their memory, for tests
that check nothing is left running and for bench/memory_roles.py (no psutil needed)."""

from __future__ import annotations

import os
from pathlib import Path

PROC = Path("/proc")


def _stat(pid: int) -> list[str] | None:
    try:
        raw = (PROC / str(pid) / "stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return raw[raw.rindex(")") + 2 :].split()  # after "pid (comm) ": state, ppid, ...


def children(pid: int | None = None) -> list[int]:
    """Children of ``pid`` (default: this process), zombies (not reaped yet) included."""
    parent = os.getpid() if pid is None else pid
    found = []
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields is not None and int(fields[1]) == parent:
                found.append(int(entry.name))
    return sorted(found)


def descendants(pid: int) -> list[int]:
    seen, todo = [], [pid]
    while todo:
        for child in children(todo.pop()):
            seen.append(child)
            todo.append(child)
    return seen


def exists(pid: int) -> bool:
    """True while ``pid`` is a process, zombies included (a zombie is not reaped yet)."""
    return _stat(pid) is not None


def cmdline(pid: int) -> str:
    try:
        return (PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except (FileNotFoundError, ProcessLookupError):
        return ""


def rss_bytes(pid: int) -> int:
    """Resident memory of one process (0 once it is gone)."""
    try:
        status = (PROC / str(pid) / "status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return 0
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def pss_bytes(pid: int) -> int:
    """Proportional memory of one process: pages shared with others (a memory-mapped model
    file, the interpreter's own pages after a fork) count for their share only. 0 once gone."""
    try:
        rollup = (PROC / str(pid) / "smaps_rollup").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return 0
    for line in rollup.splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) * 1024
    return 0


def tree_rss_bytes(pid: int) -> int:
    """Resident memory of ``pid`` and all its descendants, summed."""
    return rss_bytes(pid) + sum(rss_bytes(child) for child in descendants(pid))


def nice(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[16]) if fields is not None else None


def state(pid: int) -> str:
    """The process's state letter (``R``, ``S``, ``t`` for tracing stop, ``Z`` …); "" once gone."""
    fields = _stat(pid)
    return fields[0] if fields is not None else ""


def running(pid: int) -> bool:
    """True while ``pid`` is a process that is not a zombie."""
    return state(pid) not in ("", "Z")
