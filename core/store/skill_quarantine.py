"""Rows of skills held in quarantine (``core.skills.quarantine`` holds the rules). Every method
takes the owning user."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from core.store.db import Database, Row


@dataclass(frozen=True)
class QuarantinedSkill:
    user_id: str
    name: str
    description: str
    source: str  # what was imported (a directory, an archive, a git URL)
    path: str  # the skill's directory inside that source
    files: dict[str, str]  # path -> sha256 of the bytes kept under quarantine/<name>/
    findings: list[dict[str, Any]]  # {path, line, category, reason, excerpt}
    warnings: list[str]
    created_at: float

    @classmethod
    def from_row(cls, row: Row) -> QuarantinedSkill:
        return cls(
            user_id=row["user_id"], name=row["name"], description=row["description"],
            source=row["source"], path=row["path"], files=json.loads(row["files"]),
            findings=json.loads(row["findings"]), warnings=json.loads(row["warnings"]),
            created_at=row["created_at"],
        )


class SkillQuarantine:
    def __init__(self, db: Database):
        self.db = db

    def put(self, item: QuarantinedSkill) -> None:
        """Hold ``item``, replacing an earlier quarantined import of the same name."""
        self.db.execute(
            "INSERT INTO skill_quarantine (user_id, name, description, source, path, files,"
            " findings, warnings, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (user_id, name) DO UPDATE SET description = excluded.description,"
            " source = excluded.source, path = excluded.path, files = excluded.files,"
            " findings = excluded.findings, warnings = excluded.warnings,"
            " created_at = excluded.created_at",
            (item.user_id, item.name, item.description, item.source, item.path,
             json.dumps(item.files, sort_keys=True), json.dumps(item.findings),
             json.dumps(item.warnings), item.created_at),
        )

    def get(self, user_id: str, name: str) -> QuarantinedSkill | None:
        row = self.db.one(
            "SELECT * FROM skill_quarantine WHERE user_id = ? AND name = ?", (user_id, name)
        )
        return QuarantinedSkill.from_row(row) if row else None

    def list(self, user_id: str) -> list[QuarantinedSkill]:
        rows = self.db.query(
            "SELECT * FROM skill_quarantine WHERE user_id = ? ORDER BY name", (user_id,)
        )
        return [QuarantinedSkill.from_row(row) for row in rows]

    def remove(self, user_id: str, name: str) -> bool:
        """Drop the row; False when there was none (decided already)."""
        changed = self.db.execute(
            "DELETE FROM skill_quarantine WHERE user_id = ? AND name = ?", (user_id, name)
        )
        return changed == 1
