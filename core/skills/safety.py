"""Scanning a skill before it is stored: the memory scanner for its text, plus dangerous shell
patterns for its scripts. Binary assets are stored unscanned but never shown to the model."""

from __future__ import annotations

from collections.abc import Mapping

from core.skills.paths import is_script

TEXT_SUFFIXES = (".md", ".txt", ".markdown", ".rst", ".yaml", ".yml", ".json", ".toml")


def scan_file(path: str, data: bytes) -> str | None:
    """Why this file must not be stored, or None when it is acceptable."""
    from core.security import describe, scan_script, scan_text

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        if path == "SKILL.md" or is_script(path) or path.endswith(TEXT_SUFFIXES):
            return f"{path}: not UTF-8 text"
        return None
    script = is_script(path) or text.startswith("#!")
    # A skill documents commands; the agent's own commands are checked again when it runs them.
    findings = scan_script(text, docs=True) if script else scan_text(text, docs=True)
    return f"{path}: {describe(findings)}" if findings else None


def scan_files(files: Mapping[str, bytes]) -> list[str]:
    """Every reason to refuse these files (empty: all clean)."""
    return [reason for path, data in sorted(files.items()) if (reason := scan_file(path, data))]
