"""The SKILL.md format (agentskills.io): parse leniently, find skill directories, render back.

``parse_skill`` loads whatever a reasonable author wrote and reports what is off as warnings; it
raises ``SkillParseError`` only when there is no usable skill: no front matter, YAML unreadable
even after repair, no description, or no name and no directory name to stand in for it.

- A UTF-8 BOM and CRLF / CR line endings are accepted silently.
- Plain values holding ``": "`` (``description: Use when: …``) are invalid YAML; they are quoted
  and the front matter read again, with a ``yaml-fallback`` warning.
- Spec fields and fields other agents are known to add (``EXTENSION_FIELDS``: Hermes' ``version``,
  ``tags``, ``prerequisites``… and Claude Code's) load silently; any other top-level field loads
  with an ``unknown-field`` warning.
- Scalar ``metadata`` values (``1.0``, ``true``) become strings silently. ``metadata.hermes`` and
  a ``metadata.tags`` list are read for ``tags``/``category`` and kept in ``frontmatter`` only;
  other nested values are left out of ``metadata`` with a ``metadata-value`` warning.
- ``tags`` merge top-level ``tags``, ``metadata.tags`` and ``metadata.hermes.tags`` (a list or a
  comma-separated string), first spelling kept, duplicates dropped regardless of case.
"""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.skills.frontmatter import (
    SkillParseError,
    load_frontmatter,
    normalize_text,
    render_skill,
    split_frontmatter,
)

__all__ = [
    "EXTENSION_FIELDS", "MAX_COMPATIBILITY_CHARS", "MAX_DESCRIPTION_CHARS", "MAX_NAME_CHARS",
    "SKILL_FILE", "SPEC_FIELDS", "ParsedSkill", "SkillParseError", "SkillWarning",
    "find_skill_dirs", "load_frontmatter", "load_skill_dir", "name_problems", "normalize_text",
    "parse_skill", "read_skill_text", "render_skill", "same_name", "skill_files",
    "split_frontmatter",
]

SKILL_FILE = "SKILL.md"
MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 1024
MAX_COMPATIBILITY_CHARS = 500
SPEC_FIELDS = frozenset(
    {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
)
EXTENSION_FIELDS = frozenset({
    # Hermes Agent
    "version", "author", "platforms", "tags", "category", "prerequisites", "related_skills",
    "environments", "required_environment_variables", "required_credential_files", "setup",
    # Claude Code
    "argument-hint", "disable-model-invocation", "user-invocable", "model", "context",
})

_SCALAR = (str, int, float, bool)


@dataclass(frozen=True)
class SkillWarning:
    rule: str
    message: str


@dataclass(frozen=True)
class ParsedSkill:
    name: str
    description: str
    body: str
    frontmatter: dict[str, Any]
    license: str | None
    compatibility: str | None
    metadata: dict[str, str]
    allowed_tools: list[str]
    tags: list[str]
    category: str | None
    warnings: list[SkillWarning]


class _Warnings(list[SkillWarning]):
    def add(self, rule: str, message: str) -> None:
        self.append(SkillWarning(rule, message))


def name_problems(name: str) -> list[str]:
    """What is wrong with ``name`` under the spec's naming rule (empty list: nothing)."""
    if not name:
        return ["it is empty"]
    problems = []
    if len(name) > MAX_NAME_CHARS:
        problems.append(f"it has {len(name)} characters (at most {MAX_NAME_CHARS})")
    if any(ch.isupper() for ch in name):
        problems.append("it has uppercase letters")
    bad = dict.fromkeys(ch for ch in name if not (ch.isascii() and ch.isalnum()) and ch != "-"
                        and not ch.isupper())
    if bad:
        shown = " ".join(repr(ch) for ch in bad)
        problems.append(f"only a-z, 0-9 and '-' are allowed (found {shown})")
    if name.startswith("-") or name.endswith("-"):
        problems.append("it starts or ends with '-'")
    if "--" in name:
        problems.append("it contains '--'")
    return problems


def same_name(a: str, b: str) -> bool:
    """Compare as Unicode text, so a decomposed (macOS) directory name still matches."""
    return unicodedata.normalize("NFC", a) == unicodedata.normalize("NFC", b)


def parse_skill(text: str, *, dir_name: str | None = None) -> ParsedSkill:
    """Parse SKILL.md text leniently. ``dir_name`` is the skill's directory name, if known."""
    source, body = split_frontmatter(normalize_text(text))
    data, repaired = load_frontmatter(source)
    data = {} if data is None else data
    if not isinstance(data, dict):
        raise SkillParseError("frontmatter-not-mapping", "the front matter must be a mapping "
                              f"of fields, not a {type(data).__name__}")
    warnings = _Warnings()
    if repaired:
        warnings.add("yaml-fallback", f"{repaired}: a value holding ': ' must be quoted; it "
                     "was read as plain text")
    description = _description(data.get("description"), warnings)
    name = _name(data.get("name"), dir_name, warnings)
    license_ = _text(data.get("license"), "license", warnings)
    compatibility = _text(data.get("compatibility"), "compatibility", warnings)
    if compatibility is not None and len(compatibility) > MAX_COMPATIBILITY_CHARS:
        warnings.add("compatibility-too-long", f"compatibility has {len(compatibility)} "
                     f"characters (at most {MAX_COMPATIBILITY_CHARS})")
    metadata = _metadata(data.get("metadata"), warnings)
    allowed_tools = _allowed_tools(data.get("allowed-tools"), warnings)
    for key in data:
        if key not in SPEC_FIELDS and key not in EXTENSION_FIELDS:
            warnings.add("unknown-field", f"field {key!r} is not part of the Agent Skills spec")
    return ParsedSkill(
        name=name,
        description=description,
        body=body,
        frontmatter=data,
        license=license_,
        compatibility=compatibility,
        metadata=metadata,
        allowed_tools=allowed_tools,
        tags=_tags(data),
        category=_category(data),
        warnings=list(warnings),
    )


def read_skill_text(skill_md: Path) -> str:
    """The text of a SKILL.md file; ``SkillParseError`` (rule ``encoding``) if not UTF-8."""
    try:
        return skill_md.read_bytes().decode("utf-8")
    except UnicodeDecodeError as error:
        raise SkillParseError("encoding", f"not UTF-8 text (byte {error.start})") from None


def load_skill_dir(path: Path) -> tuple[ParsedSkill, list[str]]:
    """Load the skill in directory ``path`` leniently: the skill, and the relative POSIX paths
    (sorted) of its other files. Hidden files and symlinks are left out."""
    path = Path(path)
    skill_md = path / SKILL_FILE
    if not skill_md.is_file():
        raise SkillParseError("skill-md-missing", f"{path}: no {SKILL_FILE} in this directory")
    try:
        skill = parse_skill(read_skill_text(skill_md), dir_name=Path(os.path.abspath(path)).name)
    except SkillParseError as error:
        raise SkillParseError(error.rule, f"{skill_md}: {error}") from None
    return skill, skill_files(path)


def skill_files(path: Path) -> list[str]:
    """Relative POSIX paths of the files in a skill directory other than its SKILL.md."""
    found = []
    for root, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if _visible(d) and not os.path.islink(Path(root, d))]
        for file_name in files:
            full = Path(root, file_name)
            if _visible(file_name) and not full.is_symlink():
                found.append(full.relative_to(path).as_posix())
    return sorted(f for f in found if f != SKILL_FILE)


def find_skill_dirs(root: Path) -> list[Path]:
    """Every skill directory at or under ``root``, sorted. A skill's own subdirectories are not
    searched; hidden directories and symlinks are skipped."""
    root = Path(root)
    if (root / SKILL_FILE).is_file():
        return [root]
    found: list[Path] = []
    for current, dirs, _files in os.walk(root):
        dirs[:] = [d for d in dirs if _visible(d) and not os.path.islink(Path(current, d))]
        skills = [d for d in dirs if Path(current, d, SKILL_FILE).is_file()]
        found.extend(Path(current, d) for d in skills)
        dirs[:] = [d for d in dirs if d not in skills]
    return sorted(found)


def _visible(name: str) -> bool:
    return not name.startswith(".") and name != "__pycache__"


def _scalar_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _description(value: Any, warnings: _Warnings) -> str:
    if isinstance(value, str) or value is None:
        text = (value or "").strip()
    elif isinstance(value, _SCALAR):
        text = _scalar_text(value)
        warnings.add("description-type", "description should be a string")
    else:
        raise SkillParseError("description-type",
                              f"description must be text, not a {type(value).__name__}")
    if not text:
        raise SkillParseError("description-missing", "the front matter has no description: "
                              "say what the skill does and when to use it")
    if len(text) > MAX_DESCRIPTION_CHARS:
        warnings.add("description-too-long", f"description has {len(text)} characters "
                     f"(at most {MAX_DESCRIPTION_CHARS})")
    return text


def _name(value: Any, dir_name: str | None, warnings: _Warnings) -> str:
    declared: str | None = None
    if isinstance(value, str):
        declared = value.strip() or None
    elif isinstance(value, _SCALAR):
        declared = _scalar_text(value)
        warnings.add("name-type", f"name should be a string, got {value!r}")
    elif value is not None:
        problem = f"name must be text, not a {type(value).__name__}"
        if dir_name is None:
            raise SkillParseError("name-type", problem)
        warnings.add("name-type", f"{problem}; using the directory name")
    if declared is None and dir_name is None:
        raise SkillParseError("name-missing", "the front matter has no name")
    if declared is None and (value is None or isinstance(value, str)):
        warnings.add("name-missing", f"no name in the front matter; using {dir_name!r}")
    name = declared if declared is not None else str(dir_name)
    problems = name_problems(name)
    if problems:
        warnings.add("name-format", f"name {name!r}: " + "; ".join(problems))
    if declared is not None and dir_name is not None and not same_name(declared, dir_name):
        warnings.add("name-mismatch", f"name {declared!r} differs from its directory "
                     f"{dir_name!r}")
    return name


def _text(value: Any, field: str, warnings: _Warnings) -> str | None:
    if value is None or isinstance(value, str):
        return (value or "").strip() or None
    if isinstance(value, _SCALAR):
        warnings.add(f"{field}-type", f"{field} should be a string")
        return _scalar_text(value)
    warnings.add(f"{field}-type", f"{field} must be text, not a {type(value).__name__}; "
                 "it was ignored")
    return None


def _metadata(value: Any, warnings: _Warnings) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        warnings.add("metadata-type", f"metadata must be a mapping, not a {type(value).__name__}")
        return {}
    out: dict[str, str] = {}
    for key, item in value.items():
        if item is None or isinstance(item, _SCALAR):
            out[str(key)] = "" if item is None else _scalar_text(item)
        elif key != "hermes" and not (key == "tags" and isinstance(item, list)):
            warnings.add("metadata-value", f"metadata.{key} is a {type(item).__name__}, "
                         "not a string; it was left out")
    return out


def _allowed_tools(value: Any, warnings: _Warnings) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return _split_tools(value)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return [item.strip() for item in value if item.strip()]
    warnings.add("allowed-tools-type", "allowed-tools must be a space-separated string or a "
                 "list of strings; it was ignored")
    return []


def _split_tools(text: str) -> list[str]:
    """Split on spaces and commas outside parentheses: ``Bash(git add:*) Read``."""
    tools, current, depth = [], "", 0
    for ch in text:
        depth = depth + 1 if ch == "(" else max(depth - 1, 0) if ch == ")" else depth
        if depth == 0 and (ch.isspace() or ch == ","):
            tools.append(current)
            current = ""
        else:
            current += ch
    return [tool for tool in [*tools, current] if tool]


def _string_list(value: Any) -> list[str]:
    if isinstance(value, str):
        value = value.strip().removeprefix("[").removesuffix("]").split(",")
    if not isinstance(value, list):
        return []
    return [_scalar_text(item).strip() for item in value if isinstance(item, _SCALAR)]


def _nested(data: Any, *keys: str) -> Any:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _tags(data: dict[str, Any]) -> list[str]:
    tags: dict[str, str] = {}
    for source in (("tags",), ("metadata", "tags"), ("metadata", "hermes", "tags")):
        for tag in _string_list(_nested(data, *source)):
            if tag:
                tags.setdefault(tag.casefold(), tag)
    return list(tags.values())


def _category(data: dict[str, Any]) -> str | None:
    for source in (("category",), ("metadata", "category"), ("metadata", "hermes", "category")):
        value = _nested(data, *source)
        if isinstance(value, _SCALAR) and _scalar_text(value).strip():
            return _scalar_text(value).strip()
    return None
