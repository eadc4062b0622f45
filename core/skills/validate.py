"""Strict validation of skills against the Agent Skills specification (``iris skills validate``).

Every problem is reported, each with the file it is in and a stable rule id. Beyond what the
lenient loader warns about, the strict rules refuse: any top-level field outside the spec's six
(``unknown-field``), non-string ``metadata`` keys or values (``metadata-value``), an empty
``compatibility``, a UTF-8 BOM (``bom``) and front matter that is only readable after repair
(``yaml-invalid``; the repaired fields are still checked). Lengths are counted in characters
after trimming surrounding whitespace, so a block scalar's final newline does not count.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.skills.format import (
    MAX_COMPATIBILITY_CHARS,
    MAX_DESCRIPTION_CHARS,
    SKILL_FILE,
    SPEC_FIELDS,
    SkillParseError,
    find_skill_dirs,
    load_frontmatter,
    name_problems,
    normalize_text,
    read_skill_text,
    same_name,
    split_frontmatter,
)


@dataclass(frozen=True)
class Violation:
    path: str
    rule: str
    message: str


def validate_skill_dir(path: Path) -> list[Violation]:
    """Every spec violation of the skill in directory ``path``."""
    path = Path(path)
    if not path.is_dir():
        if not path.exists():
            return [Violation(str(path), "path-missing", f"{path} does not exist")]
        return [Violation(str(path), "not-a-directory", f"{path} is a file, not a skill "
                          "directory")]
    skill_md = path / SKILL_FILE
    if not skill_md.is_file():
        return [Violation(str(path), "skill-md-missing", f"no {SKILL_FILE} in this directory")]
    where = str(skill_md)
    try:
        text = read_skill_text(skill_md)
    except SkillParseError as error:
        return [Violation(where, error.rule, str(error))]
    found: list[tuple[str, str]] = []
    if text.startswith("\ufeff"):
        found.append(("bom", "the file starts with a byte order mark; save it as UTF-8 "
                      "without a BOM"))
    try:
        data, repaired = load_frontmatter(split_frontmatter(normalize_text(text))[0])
    except SkillParseError as error:
        return [Violation(where, rule, message) for rule, message in
                [*found, (error.rule, str(error))]]
    if repaired:
        found.append(("yaml-invalid", f"the front matter is not valid YAML: {repaired}; "
                      "quote values that contain ': '"))
    if data is None:
        data = {}
    if not isinstance(data, dict):
        found.append(("frontmatter-not-mapping",
                      f"the front matter must be a mapping, not a {type(data).__name__}"))
    else:
        found.extend(_field_problems(data, Path(os.path.abspath(path)).name))
    return [Violation(where, rule, message) for rule, message in found]


def validate_paths(paths: list[Path]) -> list[Violation]:
    """Validate each path: a skill directory, a SKILL.md file, or a directory holding skill
    directories at any depth."""
    violations: list[Violation] = []
    for path in map(Path, paths):
        if path.is_file() and path.name == SKILL_FILE:
            violations.extend(validate_skill_dir(path.parent))
        elif path.is_file():
            violations.append(Violation(str(path), "not-a-skill", "expected a skill directory, "
                                        f"a {SKILL_FILE} file or a directory of skills"))
        elif not path.exists():
            violations.append(Violation(str(path), "path-missing", f"{path} does not exist"))
        else:
            skill_dirs = find_skill_dirs(path)
            if not skill_dirs:
                violations.append(Violation(str(path), "no-skills", "no skill directory (one "
                                            f"holding {SKILL_FILE}) was found here"))
            for skill_dir in skill_dirs:
                violations.extend(validate_skill_dir(skill_dir))
    return violations


def _field_problems(data: dict[Any, Any], dir_name: str) -> list[tuple[str, str]]:
    found = [("unknown-field", f"field {key!r} is not part of the Agent Skills spec "
              f"(allowed: {', '.join(sorted(SPEC_FIELDS))}); move it under metadata")
             for key in data if key not in SPEC_FIELDS]
    found.extend(_name_problems(data, dir_name))
    found.extend(_description_problems(data))
    if "license" in data and not isinstance(data["license"], str):
        found.append(("license-type", "license must be a string"))
    if "compatibility" in data:
        found.extend(_compatibility_problems(data["compatibility"]))
    if "metadata" in data:
        found.extend(_metadata_problems(data["metadata"]))
    tools = data.get("allowed-tools")
    tool_list = isinstance(tools, list) and all(isinstance(tool, str) for tool in tools)
    if "allowed-tools" in data and not (isinstance(tools, str) or tool_list):
        found.append(("allowed-tools-type", "allowed-tools must be a space-separated string or "
                      "a list of strings"))
    return found


def _name_problems(data: dict[Any, Any], dir_name: str) -> list[tuple[str, str]]:
    name = data.get("name")
    if name is None or name == "":
        return [("name-missing", "the required field 'name' is missing or empty")]
    if not isinstance(name, str):
        return [("name-type", f"name must be a string, got {name!r}")]
    found = []
    problems = name_problems(name)
    if problems:
        found.append(("name-format", f"name {name!r}: " + "; ".join(problems)))
    if not same_name(name, dir_name):
        found.append(("name-mismatch", f"name {name!r} must equal its directory name "
                      f"{dir_name!r}"))
    return found


def _description_problems(data: dict[Any, Any]) -> list[tuple[str, str]]:
    description = data.get("description")
    if description is not None and not isinstance(description, str):
        return [("description-type", "description must be a string")]
    text = (description or "").strip()
    if not text:
        return [("description-missing", "the required field 'description' is missing or empty")]
    if len(text) > MAX_DESCRIPTION_CHARS:
        return [("description-too-long", f"description has {len(text)} characters (at most "
                 f"{MAX_DESCRIPTION_CHARS})")]
    return []


def _compatibility_problems(value: Any) -> list[tuple[str, str]]:
    if not isinstance(value, str):
        return [("compatibility-type", "compatibility must be a string")]
    if not value.strip():
        return [("compatibility-empty", "compatibility must not be empty when present")]
    if len(value.strip()) > MAX_COMPATIBILITY_CHARS:
        return [("compatibility-too-long", f"compatibility has {len(value.strip())} characters "
                 f"(at most {MAX_COMPATIBILITY_CHARS})")]
    return []


def _metadata_problems(value: Any) -> list[tuple[str, str]]:
    if not isinstance(value, dict):
        return [("metadata-type", "metadata must be a mapping of strings to strings")]
    return [("metadata-value", f"metadata.{key}: keys and values must be strings, got a "
             f"{type(item).__name__ if isinstance(key, str) else 'non-string key'}"
             + ("; quote it" if isinstance(item, (int, float, bool)) else ""))
            for key, item in value.items()
            if not isinstance(key, str) or not isinstance(item, str)]
