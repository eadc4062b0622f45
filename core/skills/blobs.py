"""Skill files in the object store, every version kept.

Per user (the object store prefixes every key with ``users/<user_id>/``)::

    skills/<name>/blobs/<sha256>              file contents, content-addressed, written once
    skills/<name>/versions/<NNNNNN>.json      a manifest: path -> sha256 for every file

A version is written with ``if_none_match``, so two writers can never both create version N;
the database index then records it as the head with its own compare-and-set. Nothing is ever
overwritten or deleted, which is what makes rollback possible.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.store.objects import ObjectStore

VERSION_RE = re.compile(r"^(\d{6,})\.json$")


@dataclass(frozen=True)
class Manifest:
    name: str
    version: int
    provenance: str
    action: str
    files: dict[str, str]  # path -> sha256
    created_at: float
    sizes: dict[str, int] = field(default_factory=dict)
    note: str | None = None
    archived: bool = False

    def to_json(self) -> bytes:
        body: dict[str, Any] = {
            "name": self.name, "version": self.version, "provenance": self.provenance,
            "action": self.action, "note": self.note, "archived": self.archived,
            "created_at": self.created_at, "files": dict(sorted(self.files.items())),
            "sizes": dict(sorted(self.sizes.items())),
        }
        return json.dumps(body, indent=1, ensure_ascii=False).encode("utf-8")

    @classmethod
    def from_json(cls, data: bytes) -> Manifest:
        raw = json.loads(data.decode("utf-8"))
        return cls(
            name=raw["name"], version=int(raw["version"]), provenance=raw["provenance"],
            action=raw["action"], files=dict(raw["files"]), sizes=dict(raw.get("sizes", {})),
            note=raw.get("note"),
            archived=bool(raw.get("archived")), created_at=float(raw["created_at"]),
        )


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class SkillObjects:
    def __init__(self, objects: ObjectStore):
        self.objects = objects

    @staticmethod
    def manifest_key(name: str, version: int) -> str:
        return f"skills/{name}/versions/{version:06d}.json"

    @staticmethod
    def blob_key(name: str, sha: str) -> str:
        return f"skills/{name}/blobs/{sha}"

    def put_blobs(self, user_id: str, name: str, files: dict[str, bytes]) -> dict[str, str]:
        """Store every file's content (once per distinct content); returns path -> sha256."""
        from core.store.objects import PreconditionFailed

        shas: dict[str, str] = {}
        for path, data in files.items():
            sha = shas[path] = digest(data)
            key = self.blob_key(name, sha)
            if self.objects.head(user_id, key) is not None:
                continue
            with contextlib.suppress(PreconditionFailed):  # same content, written meanwhile
                self.objects.put(user_id, key, data, if_none_match=True)
        return shas

    def put_manifest(self, user_id: str, manifest: Manifest) -> None:
        """Write a new version; raises PreconditionFailed if that version already exists."""
        key = self.manifest_key(manifest.name, manifest.version)
        self.objects.put(user_id, key, manifest.to_json(), if_none_match=True)

    def highest_version(self, user_id: str, name: str) -> int:
        """The highest version number written, committed to the index or not."""
        highest = 0
        for key in self.objects.list(user_id, f"skills/{name}/versions/"):
            match = VERSION_RE.match(key.rsplit("/", 1)[-1])
            if match:
                highest = max(highest, int(match[1]))
        return highest

    def manifest(self, user_id: str, name: str, version: int) -> Manifest:
        return Manifest.from_json(self.objects.get(user_id, self.manifest_key(name, version)).data)

    def blob(self, user_id: str, name: str, sha: str) -> bytes:
        data = self.objects.get(user_id, self.blob_key(name, sha)).data
        if digest(data) != sha:
            raise ValueError(f"skill {name!r}: stored file {sha[:12]} is corrupt")
        return data

    def files(self, user_id: str, manifest: Manifest) -> dict[str, bytes]:
        return {path: self.blob(user_id, manifest.name, sha) for path, sha in
                manifest.files.items()}

    def discard(self, user_id: str, name: str, version: int) -> None:
        """Remove a manifest that lost the index compare-and-set (it was never a version)."""
        from core.store.objects import ObjectNotFound

        with contextlib.suppress(ObjectNotFound):
            self.objects.delete(user_id, self.manifest_key(name, version))
