"""How sandbox results read to the model: exit status, output, and what was cut."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sandboxes import ExecResult

BINARY_SNIFF = 8192


def format_exec(result: ExecResult, limit: int) -> str:
    """Exit status first, then stdout and stderr, within ``limit`` characters overall."""
    from sandboxes import cap_output

    if result.timed_out:
        status = f"timed out after {result.duration:.1f} s; the command was stopped"
    else:
        status = f"exit code {result.exit_code} ({result.duration:.2f} s)"
    parts = [status]
    if result.note:
        parts.append(f"[{result.note}]")
    stdout, stderr = result.stdout, result.stderr
    if stdout and stderr:
        half = limit // 2
        stdout, cut_out = cap_output(stdout, max(half, limit - len(stderr)))
        stderr, cut_err = cap_output(stderr, max(half, limit - len(stdout)))
    else:
        stdout, cut_out = cap_output(stdout, limit)
        stderr, cut_err = cap_output(stderr, limit)
    if stdout:
        parts.append(f"stdout:\n{stdout.rstrip(chr(10))}")
    if stderr:
        parts.append(f"stderr:\n{stderr.rstrip(chr(10))}")
    if not stdout and not stderr:
        parts.append("(no output)")
    if result.truncated or cut_out or cut_err:
        parts.append(
            "[output truncated: the middle was left out; redirect the output to a file and "
            "read parts of it with read_file or search_files]"
        )
    return "\n".join(parts)


def is_binary(data: bytes) -> bool:
    return b"\x00" in data[:BINARY_SNIFF]


def decode_text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")
