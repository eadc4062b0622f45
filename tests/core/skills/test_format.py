from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.skills.format import (
    ParsedSkill,
    SkillParseError,
    SkillWarning,
    find_skill_dirs,
    load_skill_dir,
    parse_skill,
    render_skill,
)
from iris_testing.growth import assert_linear

CORPUS = Path(__file__).parent / "corpus"
EXPECTED: dict[str, dict] = json.loads((CORPUS / "expected.json").read_text(encoding="utf-8"))


def rules(skill: ParsedSkill) -> list[str]:
    return sorted(w.rule for w in skill.warnings)


def test_manifest_covers_every_skill_directory_in_the_corpus():
    on_disk = {
        p.parent.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("SKILL.md")
    } | {p.relative_to(CORPUS).as_posix() for p in CORPUS.iterdir() if p.is_dir()
         and not any(p.rglob("SKILL.md"))}
    assert on_disk == set(EXPECTED)
    assert len(EXPECTED) >= 60


@pytest.mark.parametrize("dir_name", sorted(EXPECTED))
def test_corpus_entry_loads_as_the_manifest_says(dir_name):
    expected = EXPECTED[dir_name]
    if "skip" in expected:
        with pytest.raises(SkillParseError) as caught:
            load_skill_dir(CORPUS / dir_name)
        assert caught.value.rule == expected["skip"]
        assert str(CORPUS / dir_name) in str(caught.value)
        return
    skill, files = load_skill_dir(CORPUS / dir_name)
    load = expected["load"]
    assert rules(skill) == load["warnings"], [w.message for w in skill.warnings]
    assert skill.name == load.get("name", Path(dir_name).name)
    for field in ("description", "body", "license", "compatibility", "metadata", "tags",
                  "category", "allowed_tools"):
        if field in load:
            assert getattr(skill, field) == load[field], field
    if "body_startswith" in load:
        assert skill.body.startswith(load["body_startswith"])
    if "files" in load:
        assert files == load["files"]
    assert "\r" not in skill.body and not skill.body.startswith("\ufeff")


def test_discovery_finds_nested_skills_but_not_hidden_or_inner_ones():
    found = {p.relative_to(CORPUS).as_posix() for p in find_skill_dirs(CORPUS)}
    expected = {name for name, entry in EXPECTED.items()
                if entry.get("discoverable", True) and (CORPUS / name / "SKILL.md").is_file()}
    assert found == expected
    assert "nested/a/b/c/d/e/deep-skill" in found
    assert "nested/.hidden/secret-skill" not in found
    assert "outer-skill/examples/inner-skill" not in found
    assert find_skill_dirs(CORPUS / "minimal") == [CORPUS / "minimal"]


def test_a_skill_valid_under_the_strict_rules_loads_without_warnings():
    for name, entry in EXPECTED.items():
        if entry["strict"] == []:
            assert entry["load"]["warnings"] == [], name


def test_parse_keeps_unknown_fields_and_scalar_types_in_frontmatter():
    skill = parse_skill(
        "---\nname: demo\ndescription: d\nversion: 1.0\nbeta: true\nwhen: yes\n"
        "owner:\n  team: a\n---\nbody\n",
        dir_name="demo",
    )
    assert skill.frontmatter == {"name": "demo", "description": "d", "version": 1.0,
                                 "beta": True, "when": "yes", "owner": {"team": "a"}}
    assert rules(skill) == ["unknown-field", "unknown-field", "unknown-field"]
    assert skill.body == "body"


def test_without_a_directory_name_there_is_no_mismatch_and_a_missing_name_is_fatal():
    skill = parse_skill("---\nname: Any-Name\ndescription: d\n---\n")
    assert skill.name == "Any-Name"
    assert rules(skill) == ["name-format"]
    with pytest.raises(SkillParseError) as caught:
        parse_skill("---\ndescription: d\n---\n")
    assert caught.value.rule == "name-missing"
    with pytest.raises(SkillParseError) as caught:
        parse_skill("---\nname: {a: b}\ndescription: d\n---\n")
    assert caught.value.rule == "name-type"


def test_a_decomposed_directory_name_matches_its_composed_name():
    nfd = unicodedata.normalize("NFD", "données")
    skill = parse_skill("---\nname: données\ndescription: d\n---\n", dir_name=nfd)
    assert rules(skill) == ["name-format"]


def test_yaml_errors_name_the_line_and_are_not_repaired_for_other_causes():
    text = "---\nname: demo\ndescription: ok\nmetadata:\n  a: 1\n b: 2\n---\n"
    with pytest.raises(SkillParseError) as caught:
        parse_skill(text, dir_name="demo")
    assert caught.value.rule == "yaml-invalid"
    assert "line 6" in str(caught.value)


def test_fallback_leaves_quoted_flow_and_block_values_untouched():
    text = (
        "---\nname: demo\ndescription: Use when: X\nlicense: 'MIT: yes'\n"
        "compatibility: |\n  a: b\n  c\nmetadata: {k: v}\n---\n"
    )
    skill = parse_skill(text, dir_name="demo")
    assert rules(skill) == ["yaml-fallback"]
    assert (skill.description, skill.license, skill.compatibility, skill.metadata) == (
        "Use when: X", "MIT: yes", "a: b\nc", {"k": "v"})


def test_fallback_quotes_values_opening_with_a_character_yaml_reserves():
    """`@Observable…` (a translated SwiftUI skill) and a backtick-led description are plain
    text to their authors; YAML reserves both characters. Read with a warning, not refused."""
    text = ("---\nname: demo\ndescription: @Observable state, views and navigation\n"
            "compatibility: `swift` 5.9 or later\nmetadata: {k: '@v'}\n---\n")
    skill = parse_skill(text, dir_name="demo")
    assert rules(skill) == ["yaml-fallback"]
    assert (skill.description, skill.compatibility, skill.metadata) == (
        "@Observable state, views and navigation", "`swift` 5.9 or later", {"k": "@v"})
    with pytest.raises(SkillParseError):  # an alias to nothing is still an error
        parse_skill("---\nname: demo\ndescription: *nothing\n---\n", dir_name="demo")


def test_huge_body_loads_in_linear_time(tmp_path):
    def skill_of(lines: int) -> tuple[Path, str]:
        body = "# Huge\n\n" + "".join(f"Line {i}: 日本語 text with `code` and ---\n"
                                      for i in range(lines))
        skill_dir = tmp_path / f"huge-body-{lines}"
        skill_dir.mkdir()
        (skill_dir / "SKILL.md").write_text(
            f"---\nname: huge-body-{lines}\ndescription: A body of several megabytes.\n---\n\n"
            f"{body}", encoding="utf-8")
        return skill_dir, body

    small, _ = skill_of(150_000 // 8)
    skill_dir, body = skill_of(150_000)
    assert_linear(load_skill_dir, small=small, large=skill_dir, scale=8,
                  what="loading a huge SKILL.md")
    skill, files = load_skill_dir(skill_dir)
    assert len(body.encode()) > 5_000_000
    assert skill.body == body.rstrip()
    assert skill.warnings == [] and files == []


def test_symlinks_are_not_listed_or_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("x")
    skill_dir = tmp_path / "linked"
    (skill_dir / "references").mkdir(parents=True)
    (skill_dir / "SKILL.md").write_text("---\nname: linked\ndescription: d\n---\n")
    (skill_dir / "references" / "real.md").write_text("# Real\n")
    (skill_dir / "references" / "link.md").symlink_to(outside / "secret.txt")
    (skill_dir / "escape").symlink_to(outside, target_is_directory=True)
    (tmp_path / "alias").symlink_to(skill_dir, target_is_directory=True)
    _, files = load_skill_dir(skill_dir)
    assert files == ["references/real.md"]
    assert find_skill_dirs(tmp_path) == [skill_dir]


def test_render_writes_readable_front_matter_and_round_trips():
    frontmatter = {
        "name": "demo",
        "description": "Use when: the user asks.\nSecond line.",
        "license": "MIT",
        "metadata": {"version": "1.0", "enabled": "yes", "date": "2025-01-31"},
        "allowed-tools": ["Bash(git:*)", "Read"],
        "version": 2,
        "owner": "team-a",
    }
    text = render_skill(frontmatter, "\n\n# Demo\r\n\r\nBody.\n\n")
    assert text.startswith("---\nname: demo\ndescription: |-\n  Use when: the user asks.\n")
    assert text.endswith("---\n\n# Demo\n\nBody.\n")
    skill = parse_skill(text, dir_name="demo")
    assert skill.frontmatter == frontmatter
    assert skill.body == "# Demo\n\nBody."
    assert skill.warnings == [
        SkillWarning("unknown-field", "field 'owner' is not part of the Agent Skills spec")
    ]


def _clean(body: str) -> str:
    return re.sub(r"\A(?:[ \t]*\n)+", "", body).rstrip()


# lists, not tuples: mypy infers a tuple literal's items as str against Collection[...] | None
_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=80)
_KEY = st.text(st.characters(codec="ascii", exclude_categories=["Cc"]), min_size=1, max_size=20)


@settings(max_examples=200, deadline=None)
@given(
    description=_TEXT.filter(lambda s: s.strip()),
    metadata=st.dictionaries(_KEY, _TEXT, max_size=4),
    extra=st.one_of(st.none(), st.integers(), st.floats(allow_nan=False), st.booleans(), _TEXT),
    body=st.text(st.characters(exclude_categories=("Cs", "Cc")) | st.just("\n"), max_size=200),
)
def test_render_then_parse_is_the_identity(description, metadata, extra, body):
    frontmatter = {"name": "round-trip", "description": description, "metadata": metadata,
                   "x-extra": extra}
    skill = parse_skill(render_skill(frontmatter, body), dir_name="round-trip")
    assert skill.frontmatter == frontmatter
    assert skill.body == _clean(body)
    assert skill.description == description.strip()


_YAMLISH = st.lists(
    st.sampled_from(["name: fuzz", "description: d", "description: Use when: x", "  - item",
                     "metadata:", "  k: v: w", "tags: [a, b", "'", '"', "|", ">-", "  text",
                     "? [a]", ": b", "*alias", "&anchor x", "!!binary AAAA", "\t", "#", "---"])
    | st.text(max_size=30),
    max_size=12,
).map("\n".join)


@settings(max_examples=300, deadline=None)
@given(front=_YAMLISH, dir_name=st.one_of(st.none(), st.just("fuzz")))
def test_any_front_matter_loads_or_fails_with_a_parse_error(front, dir_name):
    try:
        skill = parse_skill(f"---\n{front}\n---\nbody", dir_name=dir_name)
    except SkillParseError as error:
        assert error.rule
    else:
        assert skill.description and skill.name
