"""``iris skills import``: bring skills from a directory, an archive or a git repository into one
user's library. Each skill is all-or-nothing (checked and scanned in full before one version is
written); a refused skill does not stop the others; the report says what was loaded, loaded
with warnings, left unchanged and refused, and why."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import IrisUsageError
from core.skills.paths import MAX_FILE_BYTES, MAX_FILES, check_file_path, check_name
from core.skills.safety import scan_files
from core.skills.sources import open_source

if TYPE_CHECKING:
    from core.skills.library import SkillLibrary, SkillSnapshot


@dataclass
class ImportItem:
    path: str
    name: str | None
    status: str  # loaded, unchanged, refused
    version: int | None = None
    warnings: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {"path": self.path, "name": self.name, "status": self.status,
                "version": self.version, "warnings": self.warnings, "reasons": self.reasons}


@dataclass
class ImportReport:
    source: str
    items: list[ImportItem] = field(default_factory=list)
    left_out: dict[str, str] = field(default_factory=dict)  # archive entries outside any skill

    @property
    def loaded(self) -> list[ImportItem]:
        return [i for i in self.items if i.status == "loaded"]

    @property
    def warned(self) -> list[ImportItem]:
        return [i for i in self.items if i.status != "refused" and i.warnings]

    @property
    def refused(self) -> list[ImportItem]:
        return [i for i in self.items if i.status == "refused"]

    def as_dict(self) -> dict[str, object]:
        return {
            "source": self.source, "items": [i.as_dict() for i in self.items],
            "left_out": self.left_out, "loaded": len(self.loaded), "warned": len(self.warned),
            "refused": len(self.refused),
        }


def _links(skill_dir: Path) -> list[str]:
    found = []
    for current, dirs, files in os.walk(skill_dir):
        for name in [*dirs, *files]:
            if Path(current, name).is_symlink():
                found.append(Path(current, name).relative_to(skill_dir).as_posix())
    return sorted(found)


def read_skill(skill_dir: Path, refused_entries: dict[str, str], rel_dir: str,
               item: ImportItem) -> dict[str, bytes] | None:
    """The skill's files, checked and scanned, or None with ``item.reasons`` filled in."""
    from core.skills.format import SkillParseError, load_skill_dir

    try:
        parsed, paths = load_skill_dir(skill_dir)
    except SkillParseError as error:
        item.reasons.append(str(error))
        return None
    item.name = parsed.name
    item.warnings += [w.message for w in parsed.warnings]
    try:
        check_name(parsed.name)
    except IrisUsageError as error:
        item.reasons.append(str(error))
    prefix = f"{rel_dir}/" if rel_dir not in ("", ".") else ""
    for entry, why in refused_entries.items():
        if entry.startswith(prefix):
            item.reasons.append(f"{entry.removeprefix(prefix)} was refused: {why}")
    item.reasons += [f"{link}: symbolic links are not imported" for link in _links(skill_dir)]
    if len(paths) > MAX_FILES:
        item.reasons.append(f"it has {len(paths)} files (at most {MAX_FILES})")
    files: dict[str, bytes] = {"SKILL.md": (skill_dir / "SKILL.md").read_bytes()}
    for rel in paths[:MAX_FILES]:
        try:
            check_file_path(rel, any_dir=True)
        except IrisUsageError as error:
            item.reasons.append(str(error))
            continue
        full = skill_dir / rel
        if full.stat().st_size > MAX_FILE_BYTES:
            item.reasons.append(f"{rel} is over {MAX_FILE_BYTES // 1024} KiB")
            continue
        files[rel] = full.read_bytes()
    if len(files["SKILL.md"]) > MAX_FILE_BYTES:
        item.reasons.append(f"SKILL.md is over {MAX_FILE_BYTES // 1024} KiB")
    item.reasons += [f"refused by the safety scan: {r}" for r in scan_files(files)]
    return None if item.reasons else files


def import_skills(
    library: SkillLibrary, user_id: str, source: str, *, provenance: str = "imported"
) -> ImportReport:
    """Import every skill found in ``source`` into ``user_id``'s library."""
    from core.skills.format import find_skill_dirs
    from core.skills.library import Change

    report = ImportReport(source=source)
    label = source if "://" in source or "@" in source else str(Path(source).expanduser())
    with open_source(source) as unpacked:
        skill_dirs = find_skill_dirs(unpacked.root)
        if not skill_dirs:
            raise IrisUsageError(f"{source}: no skill found (a skill is a directory holding "
                                 "SKILL.md)")
        rel_dirs = [d.relative_to(unpacked.root).as_posix() for d in skill_dirs]
        report.left_out = {
            entry: why for entry, why in unpacked.refused.items()
            if not any(entry.startswith(f"{r}/") or r == "." for r in rel_dirs)
        }
        seen: set[str] = set()
        bundled = library.bundled()
        for skill_dir, rel_dir in zip(skill_dirs, rel_dirs, strict=True):
            item = ImportItem(path=rel_dir, name=None, status="refused")
            report.items.append(item)
            files = read_skill(skill_dir, unpacked.refused, rel_dir, item)
            if files is None or item.name is None:
                continue
            name = item.name
            if name in seen:
                item.reasons.append(f"a second skill named {name!r} in this source")
                continue
            seen.add(name)
            if name in bundled and library.catalog.get(user_id, name) is None:
                item.warnings.append(f"it takes the place of the bundled skill {name!r} for "
                                     "this user")

            def build(current: SkillSnapshot | None, files: dict[str, bytes] = files) -> Change:
                return Change(provenance=provenance, action="import", replace_all=True,
                              write=files, source=label, note=f"imported from {label}")

            try:
                written = library.apply(user_id, name, build)
            except IrisUsageError as error:
                item.reasons.append(str(error))
                continue
            item.status = "loaded" if written.version is not None else "unchanged"
            item.version = written.version or written.entry.version
    return report
