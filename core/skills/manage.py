"""Changing skills: create, patch, edit, delete (archive), write_file, remove_file.

One code path for the ``skill_manage`` tool, the post-turn review and people at the CLI. Every
change is checked (format, paths, size), scanned, and stored as a new version. Bundled skills
are never changed: the first change makes the user's own copy. An imported skill's version
stays in its history when the agent changes it, and only its owner can delete it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from core.errors import IrisUsageError, NotFound
from core.skills.duplicates import near_duplicate
from core.skills.format import MAX_DESCRIPTION_CHARS, ParsedSkill, SkillParseError, parse_skill
from core.skills.library import Change, SkillLibrary, Written
from core.skills.paths import MAX_FILE_BYTES, MAX_SKILL_MD_BYTES, check_file_path, check_name
from core.skills.safety import scan_file
from core.skills.snapshot import SKILL_MD, SkillSnapshot

TEMPLATE = (
    "---\nname: NAME\ndescription: What it does. Use when <the situations and words that call "
    "for it>.\n---\n\n# Title\n\n1. Steps with exact commands\n\n## Pitfalls\n"
)
QUIET_WARNINGS = {"yaml-fallback"}


class SkillRefused(IrisUsageError):
    """The change was refused (bad format, unsafe content, near-duplicate...); nothing stored."""


@dataclass(frozen=True)
class Outcome:
    written: Written
    message: str


def check_skill_md(name: str, text: str) -> tuple[ParsedSkill, list[str]]:
    """Parse SKILL.md text written for skill ``name``; refuse what the index could not use."""
    if len(text.encode("utf-8")) > MAX_SKILL_MD_BYTES:
        raise SkillRefused(f"SKILL.md is over {MAX_SKILL_MD_BYTES // 1024} KiB; move details "
                           "into references/ files")
    try:
        parsed = parse_skill(text, dir_name=name)
    except SkillParseError as error:
        raise SkillRefused(f"SKILL.md is not usable: {error}. It must look like:\n{TEMPLATE}") \
            from None
    declared = parsed.frontmatter.get("name")
    if declared != name:
        raise SkillRefused(f"the front matter must say 'name: {name}' (found {declared!r})")
    if len(parsed.description) > MAX_DESCRIPTION_CHARS:
        raise SkillRefused(f"the description has {len(parsed.description)} characters; at most "
                           f"{MAX_DESCRIPTION_CHARS}")
    if not parsed.body.strip():
        raise SkillRefused("the body after the front matter is empty: write the procedure")
    warnings = [w.message for w in parsed.warnings
                if w.rule not in QUIET_WARNINGS and w.rule != "unknown-field"]
    return parsed, warnings


def _scan(path: str, data: bytes) -> None:
    reason = scan_file(path, data)
    if reason:
        raise SkillRefused(f"refused by the safety scan: {reason}")


def replace_once(text: str, old: str, new: str, *, replace_all: bool = False) -> str:
    """Replace ``old`` in ``text`` exactly (or, failing that, ignoring differences in
    whitespace). Refuses when it is missing, or found more than once without ``replace_all``."""
    if not old:
        raise SkillRefused("old_string is empty: quote the exact passage to replace")
    count = text.count(old)
    if count == 1 or (count > 1 and replace_all):
        return text.replace(old, new)
    if count > 1:
        raise SkillRefused(f"old_string occurs {count} times; include more surrounding text so "
                           "it is unique, or set replace_all")
    pattern = re.compile(r"\s+".join(re.escape(part) for part in old.split()))
    matches = list(pattern.finditer(text))
    if len(matches) == 1 or (matches and replace_all):
        return pattern.sub(lambda m: new, text)
    if matches:
        raise SkillRefused(f"old_string occurs {len(matches)} times (ignoring whitespace); "
                           "include more surrounding text")
    raise SkillRefused("old_string was not found; view the skill with skill_view and quote "
                       "the passage exactly")


class SkillEditor:
    """Writes to one user's skills on behalf of ``provenance`` (agent, user or imported)."""

    def __init__(self, library: SkillLibrary, user_id: str, *, provenance: str = "agent",
                 note: str | None = None):
        self.library = library
        self.user_id = user_id
        self.provenance = provenance
        self.note = note

    def create(self, name: str, content: str) -> Outcome:
        check_name(name)
        parsed, warnings = check_skill_md(name, content)
        data = content.encode("utf-8")
        _scan(SKILL_MD, data)
        if self.library.find(self.user_id, name) is not None:
            raise SkillRefused(f"a skill named {name!r} already exists; change it with "
                               "action 'patch' (or 'edit') instead")
        twin = near_duplicate(name, parsed.description, self.library.entries(self.user_id))
        if twin is not None:
            raise SkillRefused(
                f"not created: {twin.reason}. Patch {twin.entry.name!r} instead "
                f"(skill_manage action='patch', name='{twin.entry.name}'), or make the new "
                "skill clearly different"
            )

        def build(current: SkillSnapshot | None) -> Change:
            if current is not None and current.entry.status != "archived":
                raise SkillRefused(f"a skill named {name!r} already exists")
            return Change(provenance=self.provenance, action="create", replace_all=True,
                          write={SKILL_MD: data}, note=self.note)

        written = self.library.apply(self.user_id, name, build)
        return self._outcome(written, f"Created skill {name!r}", warnings)

    def edit(self, name: str, content: str) -> Outcome:
        check_name(name)
        _, warnings = check_skill_md(name, content)
        data = content.encode("utf-8")
        _scan(SKILL_MD, data)
        return self._change(name, "edit", make=lambda _: {SKILL_MD: data}, warnings=warnings)

    def patch(self, name: str, old: str, new: str, *, file_path: str | None = None,
              replace_all: bool = False) -> Outcome:
        check_name(name)
        path = check_file_path(file_path, allow_skill_md=True) if file_path else SKILL_MD
        warnings: list[str] = []

        def make(current: SkillSnapshot) -> dict[str, bytes]:
            try:
                text = current.text(path)
            except UnicodeDecodeError:
                raise SkillRefused(f"{path} is not text; replace it with write_file") from None
            changed = replace_once(text, old, new, replace_all=replace_all)
            if path == SKILL_MD:
                warnings[:] = check_skill_md(name, changed)[1]
            data = changed.encode("utf-8")
            if len(data) > (MAX_SKILL_MD_BYTES if path == SKILL_MD else MAX_FILE_BYTES):
                raise SkillRefused(f"{path} would be too large")
            _scan(path, data)
            return {path: data}

        return self._change(name, "patch", make=make, warnings=warnings,
                            detail=f" ({path})" if path != SKILL_MD else "")

    def write_file(self, name: str, file_path: str, content: str) -> Outcome:
        check_name(name)
        path = check_file_path(file_path)
        data = content.encode("utf-8")
        if len(data) > MAX_FILE_BYTES:
            raise SkillRefused(f"a skill file holds at most {MAX_FILE_BYTES // 1024} KiB")
        _scan(path, data)
        return self._change(name, "write_file", make=lambda _: {path: data},
                            detail=f" ({path})")

    def remove_file(self, name: str, file_path: str) -> Outcome:
        check_name(name)
        path = check_file_path(file_path)
        if path not in self._visible(name).shas:
            raise NotFound(f"skill {name!r} has no file {path!r}")
        return self._change(name, "remove_file", remove=frozenset({path}), detail=f" ({path})")

    def delete(self, name: str) -> Outcome:
        check_name(name)
        current = self._visible(name)
        if current.entry.bundled:
            raise SkillRefused(f"{name!r} is a bundled skill; it cannot be deleted")
        if current.entry.team_id is not None:
            raise SkillRefused(f"{name!r} is a team skill ({current.entry.kind}); a team admin "
                               "removes it (/team rollback, /team reject)")
        if current.entry.origin == "imported" and self.provenance == "agent":
            raise SkillRefused(f"{name!r} was imported by its owner; only they can remove it")

        def build(head: SkillSnapshot | None) -> Change:
            if head is None or head.entry.bundled or head.entry.status == "archived":
                raise NotFound(f"no skill named {name!r}")
            return Change(provenance=self.provenance, action="delete", archived=True,
                          note=self.note)

        written = self.library.apply(self.user_id, name, build)
        return Outcome(written, f"Archived skill {name!r} (version {written.version}); it can "
                       f"be restored with `iris skills rollback {name}`.")

    def apply(self, change: Mapping[str, Any]) -> Outcome:
        """One ``skill_manage`` action from its arguments (the tool's, or a held write's)."""
        action, name = change["action"], str(change["name"]).strip()
        text = change.get("content") or ""
        path = change.get("file_path") or ""
        if action == "create":
            return self.create(name, text)
        if action == "edit":
            return self.edit(name, text)
        if action == "patch":
            return self.patch(name, change.get("old_string") or "",
                              change.get("new_string") or "", file_path=change.get("file_path"),
                              replace_all=bool(change.get("replace_all")))
        if action == "write_file":
            return self.write_file(name, path, change.get("file_content") or "")
        if action == "remove_file":
            return self.remove_file(name, path)
        if action == "delete":
            return self.delete(name)
        raise SkillRefused(f"unknown skill action {action!r}")

    def _visible(self, name: str) -> SkillSnapshot:
        entry = self.library.find(self.user_id, name)
        if entry is None:
            raise NotFound(self._missing(name))
        return self.library.snapshot(self.user_id, name)

    def _missing(self, name: str) -> str:
        own = self.library.catalog.get(self.user_id, name)
        if own is not None and own.status == "archived":
            return (f"skill {name!r} is archived; its owner can restore it with "
                    f"`iris skills rollback {name}`")
        return f"no skill named {name!r}; skills_list() lists them"

    def _change(self, name: str, action: str, *,
                make: Callable[[SkillSnapshot], dict[str, bytes]] | None = None,
                remove: frozenset[str] = frozenset(), warnings: list[str] | None = None,
                detail: str = "") -> Outcome:
        """Apply ``make`` (new file contents computed from the head, recomputed if the head
        moves meanwhile) and ``remove`` as one new version."""
        visible = self._visible(name)
        if visible.entry.team_id is not None:
            return self._propose_to_team(visible, action, make, remove, detail)
        copying = visible.entry.bundled

        def build(current: SkillSnapshot | None) -> Change:
            if current is None or current.entry.status == "archived":
                raise NotFound(self._missing(name))
            if remove - set(current.shas):
                raise NotFound(f"skill {name!r} has no file {sorted(remove)[0]!r}")
            note = self.note or ("your own copy of the bundled skill" if current.entry.bundled
                                 else None)
            write = make(current) if make else {}
            return Change(provenance=self.provenance, action=action, write=write,
                          remove=remove, note=note)

        written = self.library.apply(self.user_id, name, build)
        if written.version is None:
            return Outcome(written, f"Skill {name!r} is unchanged (the new text equals the old).")
        if self.provenance == "agent":
            self.library.record(self.user_id, [name], "patched")
        verb = {"patch": "Patched", "edit": "Rewrote", "write_file": "Wrote a file in",
                "remove_file": "Removed a file from"}[action]
        prefix = f"{verb} skill {name!r}{detail}"
        if copying:
            prefix += " as your own copy of the bundled skill"
        return self._outcome(written, prefix, warnings or [])

    def _propose_to_team(self, current: SkillSnapshot, action: str,
                         make: Callable[[SkillSnapshot], dict[str, bytes]] | None,
                         remove: frozenset[str], detail: str) -> Outcome:
        """A change to a team skill is never made in place: it becomes the team skill's next
        proposed version, for an admin to approve; the approved one stays in use."""
        from core.skills.team_offers import propose_files

        if remove - set(current.shas):
            raise NotFound(f"skill {current.entry.name!r} has no file {sorted(remove)[0]!r}")
        write = make(current) if make else {}
        note = self.note or f"{action}{detail} by {self.provenance}"
        proposed = propose_files(self.library.store, self.user_id, current, write, remove, note)
        held = " (quarantined: the scan found something)" if proposed.findings else ""
        return Outcome(
            Written(entry=current.entry, version=None),
            f"{current.entry.name!r} is a team skill ({current.entry.kind}): your change is "
            f"proposed as its version {proposed.version}{held}; a team admin decides, and "
            f"until then version {current.entry.version} stays in use.",
        )

    @staticmethod
    def _outcome(written: Written, prefix: str, warnings: list[str]) -> Outcome:
        message = f"{prefix}: now version {written.version}."
        if warnings:
            message += " Note: " + "; ".join(warnings)
        return Outcome(written, message)
