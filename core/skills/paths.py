"""Names and paths inside a skill: what may be stored, so nothing can escape its directory."""

from __future__ import annotations

import re
import unicodedata

from core.errors import IrisUsageError
from core.skills.format import SKILL_FILE, name_problems

FILE_DIRS = ("references", "scripts", "assets", "templates")
MAX_PATH_CHARS = 255
MAX_FILE_BYTES = 1024 * 1024
MAX_SKILL_BYTES = 8 * 1024 * 1024
MAX_FILES = 200
MAX_SKILL_MD_BYTES = 256 * 1024

_SEGMENT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+@ -]*")


class SkillPathError(IrisUsageError):
    """A skill name or a file path inside a skill is not acceptable."""


def check_name(name: str) -> str:
    """Return ``name`` if it is a valid skill name (the spec's rule), else raise."""
    if not isinstance(name, str):
        raise SkillPathError("a skill name must be text")
    problems = name_problems(name)
    if problems:
        raise SkillPathError(
            f"{name!r} is not a valid skill name: {'; '.join(problems)} "
            "(use lowercase words joined by single hyphens, e.g. 'postgres-backup')"
        )
    return name


def check_file_path(path: str, *, allow_skill_md: bool = False, any_dir: bool = False) -> str:
    """Return a normalised relative POSIX path inside a skill, or raise with the reason.

    No absolute paths, no '..', no hidden segments, no backslashes or control characters. The
    agent writes files under references/, scripts/, assets/ or templates/; ``any_dir`` also
    accepts other places (imported skills keep their own layout)."""
    if not isinstance(path, str) or not path.strip():
        raise SkillPathError("file_path is empty")
    cleaned = unicodedata.normalize("NFC", path.strip())
    if cleaned == SKILL_FILE and allow_skill_md:
        return cleaned
    if cleaned == SKILL_FILE:
        raise SkillPathError("SKILL.md is changed with action 'edit' or 'patch', not as a file")
    if len(cleaned) > MAX_PATH_CHARS:
        raise SkillPathError(f"file_path is longer than {MAX_PATH_CHARS} characters")
    if cleaned.startswith(("/", "~")) or re.match(r"^[A-Za-z]:", cleaned):
        raise SkillPathError(f"file_path must be relative to the skill: {path!r}")
    if "\\" in cleaned or any(unicodedata.category(ch).startswith("C") for ch in cleaned):
        raise SkillPathError(f"file_path has a backslash or control character: {path!r}")
    segments = cleaned.split("/")
    if any(seg in ("", ".", "..") for seg in segments):
        raise SkillPathError(f"file_path must stay inside the skill (no '..' or empty parts): "
                             f"{path!r}")
    for segment in segments:
        if not _SEGMENT.fullmatch(segment) or segment.endswith((" ", ".")):
            raise SkillPathError(f"file_path part {segment!r} is not allowed (letters, digits, "
                                 "'_', '-', '.', not starting with '.')")
    if not any_dir and (len(segments) < 2 or segments[0] not in FILE_DIRS):
        raise SkillPathError(f"files go under {', '.join(d + '/' for d in FILE_DIRS)} "
                             f"(got {path!r})")
    return cleaned


def is_script(path: str) -> bool:
    return path.startswith("scripts/") or path.endswith((".sh", ".bash", ".py", ".ps1", ".js"))
