"""Hermes' MEMORY.md / USER.md format (entries separated by a line holding ``§``): export,
and import entry by entry through the scanned write path."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.errors import IrisUsageError
from core.memory.models import DELIMITER, MemoryEntry, MemoryOperation, Target, clip
from core.memory.ops import Author, MemoryRefused

if TYPE_CHECKING:
    from core.memory.book import Limits, MemoryBook

MAX_FILE_BYTES = 1_000_000


def parse_entries(text: str) -> list[str]:
    """The entries of a MEMORY.md/USER.md file, in order, without empty ones."""
    entries: list[str] = []
    current: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.strip() == "§":
            entries.append("\n".join(current).strip())
            current = []
        else:
            current.append(line)
    entries.append("\n".join(current).strip())
    return [e for e in entries if e]


def render_entries(entries: list[MemoryEntry] | list[str]) -> str:
    texts = [e if isinstance(e, str) else e.content for e in entries]
    return DELIMITER.join(texts) + "\n" if texts else ""


def target_for_filename(name: str) -> Target:
    return "user" if name.upper().startswith("USER") else "memory"


def read_memory_file(path: object) -> str:
    from pathlib import Path

    file = Path(str(path)).expanduser()
    if not file.is_file():
        raise IrisUsageError(f"{file}: no such file")
    if file.stat().st_size > MAX_FILE_BYTES:
        raise IrisUsageError(f"{file}: larger than {MAX_FILE_BYTES:,} bytes; not a memory file")
    try:
        return file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise IrisUsageError(f"{file}: not UTF-8 text") from None


@dataclass
class ImportReport:
    target: Target
    added: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [
            f"{self.target}: {len(self.added)} added, {len(self.duplicates)} already there, "
            f"{len(self.refused)} refused"
        ]
        out += [f"  refused {clip(text)!r}: {why}" for text, why in self.refused]
        out += [f"  {note}" for note in self.notes if "was full" in note]
        return out


def import_entries(
    book: MemoryBook, user_id: str, target: Target, texts: list[str], *,
    limits: Limits, who: str,
) -> ImportReport:
    """Write each entry on its own (a refused one does not stop the others), provenance
    ``import``. A full store archives its least recently used entries: nothing is lost."""
    report = ImportReport(target=target)
    author = Author(provenance="import", who=who)
    for text in texts:
        try:
            result = book.write(
                user_id, [MemoryOperation(action="add", target=target, content=text)],
                limits=limits, author=author,
            )
        except MemoryRefused as exc:
            report.refused.append((text, str(exc)))
            continue
        if any(n.startswith("Already in") for n in result.notes):
            report.duplicates.append(text)
        else:
            report.added.append(text)
        report.notes += result.notes
    return report
