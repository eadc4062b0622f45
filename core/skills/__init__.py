"""Skills in the agentskills.io format: lenient loading and strict validation of SKILL.md, a
versioned per-user library, ranking, the prompt index, imports and the post-turn review.

Names are imported on first use so that importing a submodule (the prompt section, on the
webhook path) does not load YAML.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "ParsedSkill": "core.skills.format",
    "SkillParseError": "core.skills.format",
    "SkillWarning": "core.skills.format",
    "find_skill_dirs": "core.skills.format",
    "load_skill_dir": "core.skills.format",
    "parse_skill": "core.skills.format",
    "render_skill": "core.skills.format",
    "Violation": "core.skills.validate",
    "validate_paths": "core.skills.validate",
    "validate_skill_dir": "core.skills.validate",
    "SkillLibrary": "core.skills.library",
    "SkillEditor": "core.skills.manage",
    "import_skills": "core.skills.importer",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'core.skills' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
