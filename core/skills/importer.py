"""``iris skills import``: bring skills from a directory, an archive or a git repository into one
user's library. Each skill is all-or-nothing (checked and scanned in full before one version is
written) and one skill's problem does not stop the others.

What people publish is kept: a name that breaks the standard is normalised (``google_meet`` →
``google-meet``) and two skills of one name in one source are both kept (the second suffixed),
each with a warning. A skill the safety scan has findings about is imported *quarantined*
(``core.skills.quarantine``): stored with its findings, out of the model's sight until the user
approves it. Only the unambiguous is refused (``core.skills.findings.refusal``), as is what
cannot be stored whole (links, oversized files, unreadable SKILL.md). The report says what was
loaded, warned about, quarantined and refused, and why."""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import IrisUsageError
from core.skills.findings import FileFinding, refusal, scan_files
from core.skills.format import MAX_NAME_CHARS, name_problems
from core.skills.frontmatter import set_name_line
from core.skills.paths import MAX_FILE_BYTES, MAX_FILES, check_file_path
from core.skills.sources import MAX_ENTRIES, open_source

if TYPE_CHECKING:
    from core.skills.format import ParsedSkill
    from core.skills.library import SkillLibrary
    from core.skills.snapshot import SkillSnapshot

STATUSES = ("loaded", "unchanged", "quarantined", "refused")
MAX_SKILLS = 300  # per import: each is scanned and stored, seconds for thousands


def count_files(root: Path) -> int:
    """The files under ``root`` (a directory or a clone; archives are counted as they are
    unpacked); IrisUsageError past ``MAX_ENTRIES``."""
    seen = 0
    for _current, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        seen += len(files)
        if seen > MAX_ENTRIES:
            raise IrisUsageError(f"the source has more than {MAX_ENTRIES} files")
    return seen


@dataclass
class ImportItem:
    path: str
    name: str | None
    status: str  # loaded, unchanged, quarantined, refused
    version: int | None = None
    warnings: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    findings: list[FileFinding] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {"path": self.path, "name": self.name, "status": self.status,
                "version": self.version, "warnings": self.warnings, "reasons": self.reasons,
                "findings": [f.as_dict() for f in self.findings]}


@dataclass
class ImportReport:
    source: str
    items: list[ImportItem] = field(default_factory=list)
    left_out: dict[str, str] = field(default_factory=dict)  # archive entries outside any skill

    def having(self, status: str) -> list[ImportItem]:
        return [i for i in self.items if i.status == status]

    @property
    def loaded(self) -> list[ImportItem]:
        return self.having("loaded")

    @property
    def quarantined(self) -> list[ImportItem]:
        return self.having("quarantined")

    @property
    def warned(self) -> list[ImportItem]:
        return [i for i in self.items if i.status != "refused" and i.warnings]

    @property
    def refused(self) -> list[ImportItem]:
        return self.having("refused")

    def as_dict(self) -> dict[str, object]:
        return {
            "source": self.source, "items": [i.as_dict() for i in self.items],
            "left_out": self.left_out, "loaded": len(self.loaded),
            "unchanged": len(self.having("unchanged")), "warned": len(self.warned),
            "quarantined": len(self.quarantined), "refused": len(self.refused),
        }


def normalise_name(name: str, dir_name: str) -> str:
    """A name the standard accepts: lowercase ASCII words joined by single hyphens
    (``google_meet`` → ``google-meet``, ``Letta Conversations API`` →
    ``letta-conversations-api``). Falls back to the directory's name, then to ``skill``; a
    name of digits only becomes ``skill-N`` (a bare number names a held write in chat)."""
    for candidate in (name, dir_name):
        ascii_text = unicodedata.normalize("NFKD", candidate).encode("ascii", "ignore").decode()
        words = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
        words = words[:MAX_NAME_CHARS].rstrip("-")
        if words:
            return f"skill-{words}" if words.isdigit() else words
    return "skill"


def _links(skill_dir: Path) -> list[str]:
    found = []
    for current, dirs, files in os.walk(skill_dir):
        for name in [*dirs, *files]:
            if Path(current, name).is_symlink():
                found.append(Path(current, name).relative_to(skill_dir).as_posix())
    return sorted(found)


def read_skill(skill_dir: Path, refused_entries: dict[str, str], rel_dir: str,
               item: ImportItem) -> tuple[ParsedSkill, dict[str, bytes]] | None:
    """The skill and its files, checked (not scanned), or None with ``item.reasons`` filled
    in: what keeps the skill from being stored whole."""
    from core.skills.format import SkillParseError, load_skill_dir

    try:
        parsed, paths = load_skill_dir(skill_dir)
    except SkillParseError as error:
        item.reasons.append(str(error))
        return None
    item.name = parsed.name
    item.warnings += [w.message for w in parsed.warnings if w.rule != "name-format"]
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
    return None if item.reasons else (parsed, files)


def _names(parsed: dict[int, ParsedSkill], dirs: list[Path],
           items: list[ImportItem]) -> dict[int, str]:
    """The name each readable skill is stored under: normalised, and unique in this source."""
    chosen: dict[int, str] = {}
    wanted = {i: normalise_name(p.name, dirs[i].name) for i, p in parsed.items()}
    taken = set(wanted.values())
    first: dict[str, int] = {}
    for i, name in wanted.items():
        if name != parsed[i].name:
            items[i].warnings.append(f"name {parsed[i].name!r} breaks the standard "
                                     f"({'; '.join(name_problems(parsed[i].name))}): "
                                     f"imported as {name!r}")
        if name in first:
            n = 2
            while f"{name}-{n}" in taken:
                n += 1
            taken.add(f"{name}-{n}")
            items[i].warnings.append(f"a second skill named {name!r} in this source (the "
                                     f"first is {items[first[name]].path}): imported as "
                                     f"'{name}-{n}'")
            name = f"{name}-{n}"
        else:
            first[name] = i
        chosen[i] = name
    return chosen


def import_skills(
    library: SkillLibrary, user_id: str, source: str, *, provenance: str = "imported",
    label: str | None = None, progress: Callable[[str], None] = lambda stage: None,
) -> ImportReport:
    """Import every skill found in ``source`` into ``user_id``'s library (or its quarantine).
    ``label`` names the source in the skills' history (default: ``source``); ``progress``
    hears each stage."""
    from core.skills.format import find_skill_dirs
    from core.skills.import_slot import import_slot

    report = ImportReport(source=label or source)
    label = label or (source if "://" in source or "@" in source
                      else str(Path(source).expanduser()))
    # the slot outlives the import's deadline (the lane gives up on it; the thread may go on)
    with import_slot(library.store, user_id, 2 * library.settings.skill_import_timeout), \
            open_source(source) as unpacked:
        count_files(unpacked.root)
        skill_dirs = find_skill_dirs(unpacked.root)
        if not skill_dirs:
            raise IrisUsageError(f"{source}: no skill found (a skill is a directory holding "
                                 "SKILL.md)")
        if len(skill_dirs) > MAX_SKILLS:
            raise IrisUsageError(f"{source} holds {len(skill_dirs)} skills; one import takes at "
                                 f"most {MAX_SKILLS}: split it")
        rel_dirs = [d.relative_to(unpacked.root).as_posix() for d in skill_dirs]
        report.left_out = {
            entry: why for entry, why in unpacked.refused.items()
            if not any(entry.startswith(f"{r}/") or r == "." for r in rel_dirs)
        }
        read: dict[int, tuple[ParsedSkill, dict[str, bytes]]] = {}
        for i, (skill_dir, rel_dir) in enumerate(zip(skill_dirs, rel_dirs, strict=True)):
            item = ImportItem(path=rel_dir, name=None, status="refused")
            report.items.append(item)
            if (found := read_skill(skill_dir, unpacked.refused, rel_dir, item)) is not None:
                read[i] = found
        progress(f"Found {len(skill_dirs)} skill(s); checking them")
        names = _names({i: p for i, (p, _) in read.items()}, skill_dirs, report.items)
        bundled = library.bundled()
        for done, (i, (parsed, files)) in enumerate(read.items(), start=1):
            item, name = report.items[i], names[i]
            item.name = name
            progress(f"Scanning and storing {name} ({done} of {len(read)})")
            if name != parsed.name:  # SKILL.md says the name it is stored under
                files = {**files, "SKILL.md": set_name_line(
                    files["SKILL.md"].decode("utf-8-sig"), name).encode()}
            if name in bundled and library.catalog.get(user_id, name) is None:
                item.warnings.append(f"it takes the place of the bundled skill {name!r} for "
                                     "this user")
            _store(library, user_id, item, parsed, files, label, provenance)
    return report


def _store(library: SkillLibrary, user_id: str, item: ImportItem, parsed: ParsedSkill,
           files: dict[str, bytes], label: str, provenance: str) -> None:
    from core.skills import quarantine
    from core.skills.library import Change

    assert item.name is not None
    name = item.name
    item.findings = scan_files(files)
    if item.findings:
        why = refusal(name, parsed.description, parsed.tags, item.findings)
        if why is not None:
            item.reasons.append(f"refused: {why}")
            return
        quarantine.hold(library, user_id, name=name, description=parsed.description,
                        source=label, path=item.path, files=files, findings=item.findings,
                        warnings=item.warnings)
        item.status = "quarantined"
        return

    def build(current: SkillSnapshot | None, files: dict[str, bytes] = files) -> Change:
        return Change(provenance=provenance, action="import", replace_all=True,
                      write=files, source=label, note=f"imported from {label}")

    try:
        written = library.apply(user_id, name, build)
    except IrisUsageError as error:
        item.reasons.append(str(error))
        return
    if quarantine.drop_if_held(library, user_id, name):
        item.warnings.append("it replaces a quarantined import of the same name")
    item.status = "loaded" if written.version is not None else "unchanged"
    item.version = written.version or written.entry.version
