"""Skills imported with safety findings wait here until the user has looked at them.

A quarantined skill is not in the library: its files sit under ``quarantine/<name>/`` in the
user's object store and its findings (file, line, what was found) in the
``skill_quarantine`` table. The skill index, routing, ``skill_view``, ``skills_list``, export
and curation only ever read the library, so the model cannot see or load it. Approving writes
it into the library through the ordinary versioned path (as an import); rejecting drops the row
and the files.

The user decides from ``iris skills review|approve|reject`` or, in chat, from
``/skills pending`` and ``/skills approve|reject NAME``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import suppress
from typing import TYPE_CHECKING

from core.errors import IrisUsageError, NotFound
from core.skills.blobs import digest
from core.skills.findings import FileFinding, summary
from core.store.skill_quarantine import QuarantinedSkill

if TYPE_CHECKING:
    from core.skills.library import SkillLibrary, Written

PREFIX = "quarantine"


def _key(name: str, sha: str) -> str:
    return f"{PREFIX}/{name}/{sha}"


def hold(library: SkillLibrary, user_id: str, *, name: str, description: str, source: str,
         path: str, files: Mapping[str, bytes], findings: Sequence[FileFinding],
         warnings: Sequence[str]) -> QuarantinedSkill:
    """Keep ``files`` in quarantine under ``name`` (replacing an earlier quarantined import)."""
    objects = library.store.objects
    shas = {}
    for rel, data in files.items():
        sha = digest(data)
        if objects.head(user_id, _key(name, sha)) is None:
            objects.put(user_id, _key(name, sha), data)
        shas[rel] = sha
    previous = library.store.skill_quarantine.get(user_id, name)
    item = QuarantinedSkill(
        user_id=user_id, name=name, description=description, source=source, path=path,
        files=shas, findings=[f.as_dict() for f in findings], warnings=list(warnings),
        created_at=library.store.clock.now(),
    )
    library.store.skill_quarantine.put(item)
    if previous is not None:
        _drop_blobs(library, user_id, name, set(previous.files.values()) - set(shas.values()))
    return item


def pending(library: SkillLibrary, user_id: str) -> list[QuarantinedSkill]:
    return library.store.skill_quarantine.list(user_id)


def get(library: SkillLibrary, user_id: str, name: str) -> QuarantinedSkill:
    item = library.store.skill_quarantine.get(user_id, name)
    if item is None:
        raise NotFound(f"no quarantined skill named {name!r} (iris skills pending lists them)")
    return item


def findings_of(item: QuarantinedSkill) -> list[FileFinding]:
    return [FileFinding.from_dict(f) for f in item.findings]


def files_of(library: SkillLibrary, item: QuarantinedSkill) -> dict[str, bytes]:
    objects = library.store.objects
    return {rel: objects.get(item.user_id, _key(item.name, sha)).data
            for rel, sha in item.files.items()}


def review(library: SkillLibrary, item: QuarantinedSkill) -> str:
    """What the user needs to decide: where it came from, each finding at its file and line
    with the line itself, and how to decide."""
    files = files_of(library, item)
    lines = [
        f"{item.name} — quarantined: {summary(findings_of(item))}",
        f"  from {item.source} ({item.path}); {len(item.files)} file(s)",
        f"  description: {' '.join(item.description.split())[:200]}",
    ]
    for warning in item.warnings:
        lines.append(f"  warning: {warning}")
    for finding in findings_of(item):
        lines.append(f"- {finding.where()}: {finding.label()}")
        shown = line_text(files.get(finding.path, b""), finding.line) or finding.excerpt
        if shown:
            lines.append(f"    {shown}")
    lines.append(f"iris skills approve {item.name} makes it usable; iris skills reject "
                 f"{item.name} drops it (in chat: /skills approve|reject {item.name}).")
    return "\n".join(lines)


def line_text(data: bytes, line: int | None, width: int = 160) -> str:
    from core.security.findings import clip

    if not line:
        return ""
    try:
        text = data.decode("utf-8").splitlines()[line - 1]
    except (UnicodeDecodeError, IndexError):
        return ""
    return clip(text, 0, 0, width)  # one line, secrets masked, invisible characters shown


def approve(library: SkillLibrary, user_id: str, name: str, *, by: str) -> Written:
    """Move the quarantined skill into the library as an import; raises when there is none."""
    from core.skills.library import Change

    item = get(library, user_id, name)
    files = files_of(library, item)
    note = (f"imported from {item.source}; approved by {by} after review of "
            f"{len(item.findings)} finding(s)")

    def build(current: object, files: dict[str, bytes] = files) -> Change:
        return Change(provenance="imported", action="import", replace_all=True, write=files,
                      source=item.source, note=note)

    written = library.apply(user_id, name, build)
    if library.store.skill_quarantine.remove(user_id, name):
        _drop_blobs(library, user_id, name, set(item.files.values()))
    return written


def reject(library: SkillLibrary, user_id: str, name: str) -> None:
    """Drop the quarantined skill and its files; the library is untouched."""
    item = get(library, user_id, name)
    if not library.store.skill_quarantine.remove(user_id, name):
        raise IrisUsageError(f"{name!r} was decided already")
    _drop_blobs(library, user_id, name, set(item.files.values()))


def drop_if_held(library: SkillLibrary, user_id: str, name: str) -> bool:
    """A clean import of ``name`` supersedes a quarantined one: drop it. True when it did."""
    item = library.store.skill_quarantine.get(user_id, name)
    if item is None or not library.store.skill_quarantine.remove(user_id, name):
        return False
    _drop_blobs(library, user_id, name, set(item.files.values()))
    return True


def _drop_blobs(library: SkillLibrary, user_id: str, name: str, shas: set[str]) -> None:
    from core.store.objects_base import ObjectNotFound

    for sha in shas:
        with suppress(ObjectNotFound):
            library.store.objects.delete(user_id, _key(name, sha))
