"""Merging two users into one when their accounts are linked: nothing of either is lost.

Inside one transaction the absorbed user's memory is merged entry by entry (duplicates and
overflow go to the archive), and every other table's rows move by their ``user_id`` (found
from the schema, so tables added later move too). A row that cannot move because the
surviving user already has one with the same key stays with the absorbed user, whose record
is kept (``merged_into``) and reported. Objects move afterwards, key by key, never
overwriting.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.errors import IrisUsageError
from core.memory.book import MemoryBook

if TYPE_CHECKING:
    from core.memory.book import Limits
    from core.store import Store

HANDLED = frozenset({"memory_entries", "memory_versions", "leases"})


@dataclass
class MergeReport:
    dest: str
    source: str
    rows: dict[str, int] = field(default_factory=dict)
    memory: dict[str, int] = field(default_factory=dict)
    left_behind: dict[str, int] = field(default_factory=dict)
    objects_moved: int = 0
    objects_left: list[str] = field(default_factory=list)
    pending_chats: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"merged {self.source} into {self.dest}"]
        moved = {t: n for t, n in sorted(self.rows.items()) if n}
        if moved:
            out.append("moved rows: " + ", ".join(f"{t} {n}" for t, n in moved.items()))
        if any(self.memory.values()):
            out.append("memory: " + ", ".join(f"{k} {v}" for k, v in self.memory.items()))
        if self.objects_moved:
            out.append(f"objects moved: {self.objects_moved}")
        if self.left_behind:
            kept = ", ".join(f"{t} {n}" for t, n in sorted(self.left_behind.items()))
            out.append(f"kept under {self.source} (same key exists for {self.dest}): {kept}")
        if self.objects_left:
            out.append(
                f"objects kept under {self.source} (a different object has the same key): "
                + ", ".join(self.objects_left[:10])
            )
        return out


def merge_users(
    store: Store, dest: str, source: str, *, limits: Limits, who: str
) -> MergeReport:
    """Fold ``source`` into ``dest``: accounts, memory, sessions, messages, usage and every
    other per-user row, then objects. ``source`` keeps a record pointing at ``dest``."""
    if dest == source:
        raise IrisUsageError("those accounts already belong to the same user")
    survivor, absorbed = store.users.get(dest), store.users.get(source)
    for user in (survivor, absorbed):
        if user.kind != "person":
            raise IrisUsageError(f"{user.id} is a {user.kind} scope; only people can be linked")
        if user.merged_into:
            raise IrisUsageError(f"{user.id} was already merged into {user.merged_into}")
    report = MergeReport(dest=dest, source=source)
    rows = store.rehoming
    with store.transaction():
        report.memory = MemoryBook(store).absorb(source, dest, limits=limits, who=who)
        for table in rows.user_tables():
            if table not in HANDLED:
                moved, left = rows.move_rows(table, dest, source)
                report.rows[table] = moved
                if left:
                    report.left_behind[table] = left
        rows.drop_expired_leases(source)
        rows.fold_user(dest, absorbed)
        report.pending_chats = store.inbox.pending_chats(dest)
    move_objects(store, source, dest, report)
    return report


def move_objects(store: Store, source: str, dest: str, report: MergeReport) -> None:
    """Move every object of ``source`` to the same key of ``dest`` unless a different object is
    there already (then it stays and is reported). Safe to run again."""
    from core.store.objects import ObjectNotFound, PreconditionFailed

    try:
        objects = store.objects
        keys = objects.list(source)
    except RuntimeError:
        return
    for key in keys:
        try:
            item = objects.get(source, key)
        except ObjectNotFound:
            continue
        try:
            objects.put(dest, key, item.data, if_none_match=True)
        except PreconditionFailed:
            if objects.head(dest, key) != item.etag:
                report.objects_left.append(key)
                continue
        objects.delete(source, key, if_match=item.etag)
        report.objects_moved += 1
