from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from core.skills.format import load_skill_dir
from core.skills.validate import Violation, validate_paths, validate_skill_dir

CORPUS = Path(__file__).parent / "corpus"
EXPECTED: dict[str, dict] = json.loads((CORPUS / "expected.json").read_text(encoding="utf-8"))
BUNDLED = Path(__file__).resolve().parents[3] / "skills"
BUNDLED_NAMES = {"telegram-bot-setup", "cron-automations", "modal-deploy", "skill-authoring",
                 "git-workflow"}


def skill_md_or_dir(dir_name: str) -> str:
    skill_md = CORPUS / dir_name / "SKILL.md"
    return str(skill_md if skill_md.is_file() else CORPUS / dir_name)


@pytest.mark.parametrize("dir_name", sorted(EXPECTED))
def test_corpus_entry_has_exactly_the_expected_violations(dir_name):
    violations = validate_skill_dir(CORPUS / dir_name)
    assert sorted(v.rule for v in violations) == EXPECTED[dir_name]["strict"], violations
    assert {v.path for v in violations} <= {skill_md_or_dir(dir_name)}
    assert all(v.message for v in violations)


def test_validating_the_corpus_root_finds_every_discoverable_skill():
    by_dir: dict[str, list[str]] = defaultdict(list)
    for violation in validate_paths([CORPUS]):
        skill_dir = Path(violation.path).parent.relative_to(CORPUS).as_posix()
        by_dir[skill_dir].append(violation.rule)
    expected = {
        name: entry["strict"] for name, entry in EXPECTED.items()
        if entry["strict"] and entry.get("discoverable", True)
        and (CORPUS / name / "SKILL.md").is_file()
    }
    assert {name: sorted(found) for name, found in by_dir.items()} == expected


def test_paths_may_be_skill_files_skill_dirs_or_trees(tmp_path):
    skill_md = CORPUS / "name-mismatch" / "SKILL.md"
    assert validate_paths([skill_md]) == validate_skill_dir(CORPUS / "name-mismatch")
    assert [v.rule for v in validate_paths([CORPUS / "nested" / "devops"])] == ["name-mismatch"]
    assert validate_paths([CORPUS / "minimal", CORPUS / "nested" / "a"]) == []

    empty = tmp_path / "empty"
    empty.mkdir()
    other_file = tmp_path / "notes.md"
    other_file.write_text("# notes\n")
    missing = tmp_path / "missing"
    found = validate_paths([empty, other_file, missing])
    assert [(v.path, v.rule) for v in found] == [
        (str(empty), "no-skills"), (str(other_file), "not-a-skill"), (str(missing), "path-missing"),
    ]
    assert found[2] == Violation(str(missing), "path-missing", f"{missing} does not exist")
    assert [v.rule for v in validate_skill_dir(missing)] == ["path-missing"]
    assert [v.rule for v in validate_skill_dir(other_file)] == ["not-a-directory"]


def test_messages_name_the_problem():
    (violation,) = validate_skill_dir(CORPUS / "description-too-long")
    assert violation.message == "description has 1223 characters (at most 1024)"
    (violation,) = validate_skill_dir(CORPUS / "name-mismatch")
    assert "'something-else'" in violation.message and "'name-mismatch'" in violation.message
    (violation,) = validate_skill_dir(CORPUS / "broken-yaml-tabs")
    assert "line 5" in violation.message
    (violation,) = validate_skill_dir(CORPUS / "colon-in-description")
    assert "line 3" in violation.message and "quote" in violation.message
    (violation,) = validate_skill_dir(CORPUS / "PDF-Tools")
    assert "uppercase" in violation.message


def test_bundled_skills_are_valid_and_load_without_warnings():
    dirs = sorted(p for p in BUNDLED.iterdir() if p.is_dir())
    assert {p.name for p in dirs} == BUNDLED_NAMES
    assert validate_paths([BUNDLED]) == []
    for skill_dir in dirs:
        skill, files = load_skill_dir(skill_dir)
        assert skill.warnings == [], skill_dir
        assert skill.name == skill_dir.name
        assert "Use when" in skill.description or "Use this when" in skill.description
        assert len(skill.body.splitlines()) < 500
        for relative in files:
            assert relative in skill.body, f"{skill_dir.name}: {relative} is never referenced"
