"""Skills in the agentskills.io format: lenient loading and strict validation of SKILL.md."""

from core.skills.format import (
    ParsedSkill,
    SkillParseError,
    SkillWarning,
    find_skill_dirs,
    load_skill_dir,
    parse_skill,
    render_skill,
)
from core.skills.validate import Violation, validate_paths, validate_skill_dir

__all__ = [
    "ParsedSkill",
    "SkillParseError",
    "SkillWarning",
    "Violation",
    "find_skill_dirs",
    "load_skill_dir",
    "parse_skill",
    "render_skill",
    "validate_paths",
    "validate_skill_dir",
]
