"""A user's skills: bundled ones plus their own library, read and changed one version at a time.

Every change goes through ``SkillLibrary.apply``: build the new file set from the current head,
store its blobs, write the next version's manifest (create-only), then move the index's head
with a compare-and-set. A writer that loses either race starts again from the new head, so two
concurrent changes both land, one after the other, and none is silently lost.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from core.errors import IrisUsageError, NotFound
from core.skills.blobs import Manifest, SkillObjects, digest
from core.skills.bundled import BundledSkill, load_bundled
from core.skills.paths import MAX_FILES, MAX_SKILL_BYTES
from core.skills.records import SkillEntry, SkillUsage, SkillVersion
from core.skills.snapshot import SKILL_MD, SkillSnapshot
from core.store.skills import IndexRow

if TYPE_CHECKING:
    from core.config import Settings
    from core.store import Store

SEARCH_TEXT_CHARS = 4000
ATTEMPTS = 8


class SkillConflict(IrisUsageError):
    """The skill kept changing under this writer; nothing was stored."""


@dataclass(frozen=True)
class Change:
    """What a write does to the current head (or to the bundled skill it copies)."""

    provenance: str
    action: str
    write: dict[str, bytes] = field(default_factory=dict)
    remove: frozenset[str] = frozenset()
    replace_all: bool = False  # start from no files instead of the head's
    base_version: int | None = None  # start from this version's files (rollback)
    archived: bool = False
    note: str | None = None
    source: str | None = None


@dataclass(frozen=True)
class Written:
    entry: SkillEntry
    version: int | None  # None: the change left the skill as it was
    warnings: tuple[str, ...] = ()


Builder = Callable[["SkillSnapshot | None"], Change]


def search_text(body: str) -> str:
    return body[:SEARCH_TEXT_CHARS]


class SkillLibrary:
    def __init__(self, store: Store, settings: Settings):
        self.store = store
        self.settings = settings
        self.catalog = store.skills
        self._objects: SkillObjects | None = None

    @property
    def objects(self) -> SkillObjects:
        if self._objects is None:
            self._objects = SkillObjects(self.store.objects)
        return self._objects

    def bundled(self) -> dict[str, BundledSkill]:
        return load_bundled(self.settings)

    def entries(self, user_id: str, *, include_archived: bool = False) -> list[SkillEntry]:
        """Every skill this user has: their library, then bundled skills they have no copy of."""
        from core.skills.team_offers import team_entries

        own = self.catalog.list(user_id, include_archived=include_archived)
        live = {e.name for e in own if e.status != "archived"}
        usage = self.catalog.usage(user_id)
        team = [e for e in team_entries(self.store, user_id, usage) if e.name not in live]
        live |= {e.name for e in team}
        bundled = [
            replace(skill.entry, usage=usage.get(name, SkillUsage()))
            for name, skill in self.bundled().items() if name not in live
        ]
        return sorted([*own, *team, *bundled], key=lambda e: (e.name, e.status == "archived"))

    def team_entry(self, user_id: str, name: str) -> SkillEntry | None:
        """The approved team skill ``name`` offered to ``user_id`` now, if any."""
        from core.skills.team_offers import team_entries

        usage = self.catalog.usage(user_id)
        return next((e for e in team_entries(self.store, user_id, usage) if e.name == name),
                    None)

    def find(self, user_id: str, name: str) -> SkillEntry | None:
        """The skill the agent sees under ``name``: the user's own, else the bundled one."""
        own = self.catalog.get(user_id, name)
        if own is not None and own.status != "archived":
            return own
        team = self.team_entry(user_id, name)
        if team is not None:
            return team
        bundled = self.bundled().get(name)
        if bundled is not None:
            return replace(bundled.entry, usage=self.catalog.usage_of(user_id, name))
        return None

    def snapshot(self, user_id: str, name: str, version: int | None = None) -> SkillSnapshot:
        """The visible skill ``name`` (or one version of the user's library skill)."""
        if version is None:
            entry = self.find(user_id, name)
            if entry is None:
                raise NotFound(f"no skill named {name!r}")
            if entry.bundled:
                return self._bundled_snapshot(self.bundled()[name], entry)
            if entry.team_id is not None:
                return self._team_snapshot(user_id, entry)
            return self._library_snapshot(user_id, entry, entry.version)
        head = self.catalog.get(user_id, name)
        if head is None:
            raise NotFound(f"no skill named {name!r} in this user's library")
        if not any(v.version == version for v in self.catalog.versions(user_id, name)):
            raise NotFound(f"skill {name!r} has no version {version}")
        return self._library_snapshot(user_id, head, version)

    def head(self, user_id: str, name: str) -> SkillSnapshot | None:
        """The library head (archived or not), else the bundled skill, else None."""
        own = self.catalog.get(user_id, name)
        if own is not None:
            return self._library_snapshot(user_id, own, own.version)
        bundled = self.bundled().get(name)
        return self._bundled_snapshot(bundled, bundled.entry) if bundled else None

    def versions(self, user_id: str, name: str) -> list[SkillVersion]:
        return self.catalog.versions(user_id, name)

    def record(self, user_id: str, names: list[str], event: str, *,
               at: float | None = None) -> None:
        self.catalog.record(user_id, names, event, at=at)

    def apply(self, user_id: str, name: str, build: Builder) -> Written:
        """Build a change from the current head and commit it as the next version."""
        from core.store.objects import PreconditionFailed

        for attempt in range(ATTEMPTS):
            current = self.head(user_id, name)
            change = build(current)
            files, sizes, fresh = self._file_set(user_id, current, change)
            planned = files | {path: digest(data) for path, data in fresh.items()}
            if current is not None and not current.entry.bundled and (
                planned == current.shas
                and change.archived == (current.entry.status == "archived")
            ):
                return Written(entry=current.entry, version=None)
            files.update(self.objects.put_blobs(user_id, name, fresh))
            row = self._index_row(user_id, name, change, fresh, files, current)
            library_head = current if current is not None and not current.entry.bundled else None
            expected = library_head.entry.version if library_head else None
            version = max(expected or 0, self.objects.highest_version(user_id, name)) + 1
            manifest = Manifest(
                name=name, version=version, provenance=change.provenance, action=change.action,
                files=files, sizes=sizes, note=change.note, archived=change.archived,
                created_at=self.store.clock.now(),
            )
            try:
                self.objects.put_manifest(user_id, manifest)
            except PreconditionFailed:
                time.sleep(0.01 * (attempt + 1))
                continue
            origin = library_head.entry.origin if library_head else (
                "bundled" if current is not None else change.provenance
            )
            if self.catalog.commit(
                user_id, row, version=version, expected=expected, action=change.action,
                note=change.note, archived=change.archived, origin=origin,
            ):
                entry = self.catalog.get(user_id, name)
                assert entry is not None
                self._refresh_vectors(user_id, entry)
                return Written(entry=entry, version=version)
            self.objects.discard(user_id, name, version)
            time.sleep(0.01 * (attempt + 1))
        raise SkillConflict(f"skill {name!r} kept changing while it was being written; "
                            "nothing was stored, try again")

    def _refresh_vectors(self, user_id: str, entry: SkillEntry) -> None:
        """The new version's routing vectors (``core.skills.semantic``); never fails a write."""
        if entry.status == "archived":
            return
        from core.skills.semantic import refresh_quietly

        refresh_quietly(self.store.skill_vectors, user_id, [entry])

    def rollback(
        self, user_id: str, name: str, version: int | None = None, *, provenance: str = "user"
    ) -> Written:
        """Make ``version`` (default: the one before the head) the new head, as a new version.
        Rolling back an archived skill without a version restores its last content."""
        history = self.catalog.versions(user_id, name)
        if not history:
            hint = " (bundled skills have no versions)" if name in self.bundled() else ""
            raise NotFound(f"no skill named {name!r} in this user's library{hint}")
        head = history[-1]
        if version is None:
            live = [v for v in history if not v.archived]
            entry = self.catalog.get(user_id, name)
            if head.archived or (entry is not None and entry.status == "archived"):
                target = live[-1] if live else history[-1]
            else:
                earlier = [v for v in live if v.version < head.version]
                if not earlier:
                    raise IrisUsageError(f"skill {name!r} has only one version; nothing to "
                                         "roll back to")
                target = earlier[-1]
        else:
            found = [v for v in history if v.version == version]
            if not found:
                known = ", ".join(str(v.version) for v in history)
                raise NotFound(f"skill {name!r} has no version {version} (versions: {known})")
            target = found[0]

        def build(current: SkillSnapshot | None) -> Change:
            return Change(provenance=provenance, action="rollback", base_version=target.version,
                          replace_all=True, note=f"restored version {target.version}")

        return self.apply(user_id, name, build)

    def _file_set(
        self, user_id: str, current: SkillSnapshot | None, change: Change
    ) -> tuple[dict[str, str], dict[str, int], dict[str, bytes]]:
        """(path -> sha of kept files, path -> size of every file, new contents to store)."""
        files: dict[str, str] = {}
        sizes: dict[str, int] = {}
        fresh: dict[str, bytes] = {}
        if change.base_version is not None:
            if current is None:
                raise NotFound("a change based on an earlier version needs the skill to exist")
            base = self.objects.manifest(user_id, current.entry.name, change.base_version)
            files, sizes = dict(base.files), dict(base.sizes)
        elif current is not None and not change.replace_all:
            if current.entry.bundled:
                fresh = current.all_files()
                sizes = {p: len(d) for p, d in fresh.items()}
            else:
                files, sizes = dict(current.shas), dict(current.sizes)
        for path in change.remove:
            files.pop(path, None)
            sizes.pop(path, None)
            fresh.pop(path, None)
        for path, data in change.write.items():
            files.pop(path, None)
            fresh[path] = data
            sizes[path] = len(data)
        for path, data in fresh.items():
            sha = digest(data)
            if current is not None and current.shas.get(path) == sha:
                files[path] = sha
        fresh = {p: d for p, d in fresh.items() if p not in files}
        if SKILL_MD not in files and SKILL_MD not in fresh:
            raise IrisUsageError("a skill needs a SKILL.md")
        if len(sizes) > MAX_FILES + 1:
            raise IrisUsageError(f"a skill holds at most {MAX_FILES} files besides SKILL.md")
        if sum(sizes.values()) > MAX_SKILL_BYTES:
            raise IrisUsageError(f"a skill holds at most {MAX_SKILL_BYTES // 2**20} MiB of files")
        return files, sizes, fresh

    def _index_row(
        self, user_id: str, name: str, change: Change, fresh: dict[str, bytes],
        files: dict[str, str], current: SkillSnapshot | None,
    ) -> IndexRow:
        from core.skills.format import parse_skill

        if SKILL_MD in fresh:
            text = fresh[SKILL_MD].decode("utf-8")
        elif current is not None and change.base_version is None:
            text = current.text()
        else:
            text = self.objects.blob(user_id, name, files[SKILL_MD]).decode("utf-8")
        parsed = parse_skill(text, dir_name=name)
        return IndexRow(
            name=name, description=parsed.description, tags=tuple(parsed.tags),
            category=parsed.category, provenance=change.provenance,
            files=tuple(sorted(p for p in files if p != SKILL_MD)),
            search_text=search_text(parsed.body), source=change.source,
        )

    def _library_snapshot(self, user_id: str, entry: SkillEntry, version: int) -> SkillSnapshot:
        manifest = self.objects.manifest(user_id, entry.name, version)
        shas = manifest.files

        def read(path: str) -> bytes:
            return self.objects.blob(user_id, entry.name, shas[path])

        if version != entry.version:
            entry = replace(entry, version=version, provenance=manifest.provenance)
        return SkillSnapshot(entry=entry, shas=dict(shas), sizes=dict(manifest.sizes),
                             reader=read)

    def _team_snapshot(self, user_id: str, entry: SkillEntry) -> SkillSnapshot:
        from core.skills.team_offers import team_files

        files = team_files(self.store, user_id, entry)
        entry = replace(entry, files=tuple(sorted(p for p in files if p != SKILL_MD)))
        return SkillSnapshot(entry=entry, shas=dict.fromkeys(files, ""),
                             sizes={p: len(d) for p, d in files.items()}, reader=files.__getitem__)

    @staticmethod
    def _bundled_snapshot(skill: BundledSkill, entry: SkillEntry) -> SkillSnapshot:
        paths = ["SKILL.md", *skill.files]
        sizes = {p: (skill.path / p).stat().st_size for p in paths}

        def read(path: str) -> bytes:
            return (skill.path / path).read_bytes()

        return SkillSnapshot(entry=entry, shas=dict.fromkeys(paths, ""), sizes=sizes, reader=read)
