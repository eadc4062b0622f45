"""What an import did, per kind of thing: taken, skipped (with the reason) and refused (with the
reason). Skipped: nothing to do or nothing Iris can hold (already there, not present, no Iris
equivalent); refused: something was there and was deliberately not taken (unsafe, malformed, a
secret, a conflict)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass
class KindReport:
    taken: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        return {"taken": self.taken, "skipped": self.skipped, "refused": self.refused,
                "counts": dict(self.counts)}


KINDS = ("memory", "persona", "skills", "model", "sessions", "people", "jobs", "secrets",
         "other")


@dataclass
class MigrationReport:
    home: str
    user_id: str
    dry_run: bool = False
    kinds: dict[str, KindReport] = field(default_factory=lambda: {k: KindReport() for k in KINDS})
    notes: list[str] = field(default_factory=list)
    profiles: list[MigrationReport] = field(default_factory=list)
    profile: str | None = None

    def __getitem__(self, kind: str) -> KindReport:
        return self.kinds[kind]

    def taken(self, kind: str, line: str) -> None:
        self.kinds[kind].taken.append(line)

    def skipped(self, kind: str, line: str) -> None:
        self.kinds[kind].skipped.append(line)

    def refused(self, kind: str, line: str) -> None:
        self.kinds[kind].refused.append(line)

    def count(self, kind: str, what: str, n: int = 1) -> None:
        self.kinds[kind].counts[what] += n

    def lines(self) -> list[str]:
        head = "[dry run: nothing was changed] " if self.dry_run else ""
        who = f" (profile {self.profile})" if self.profile else ""
        out = [f"{head}Hermes home {self.home}{who} -> Iris user {self.user_id}"]
        for kind, part in self.kinds.items():
            if not (part.taken or part.skipped or part.refused or part.counts):
                continue
            counts = ", ".join(f"{n:,} {what}" for what, n in sorted(part.counts.items()))
            out.append(f"{kind}:" + (f" {counts}" if counts else ""))
            out += [f"  taken: {line}" for line in part.taken]
            out += [f"  skipped: {line}" for line in part.skipped]
            out += [f"  refused: {line}" for line in part.refused]
        out += [f"note: {note}" for note in self.notes]
        for sub in self.profiles:
            out += ["", *sub.lines()]
        return out

    def as_dict(self) -> dict[str, Any]:
        return {"home": self.home, "user_id": self.user_id, "profile": self.profile,
                "dry_run": self.dry_run, "notes": self.notes,
                "kinds": {k: v.as_dict() for k, v in self.kinds.items()},
                "profiles": [p.as_dict() for p in self.profiles]}
