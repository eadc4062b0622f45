"""Moving one user's rows to another (account links): every ordinary table with a ``user_id``
column, found from the schema so tables added later move too. What the merge does with
memory, and who may be merged, are ``core.identity``'s rules."""

from __future__ import annotations

from core.store.db import Database, DatabaseError
from core.store.users import User


class Rehoming:
    def __init__(self, db: Database):
        self.db = db

    def user_tables(self) -> list[str]:
        """Ordinary tables with a ``user_id`` column (virtual FTS tables follow via triggers)."""
        names = []
        for row in self.db.query("SELECT name, sql FROM sqlite_master WHERE type = 'table'"):
            name, sql = row["name"], (row["sql"] or "").upper()
            if name.startswith("sqlite_") or sql.startswith("CREATE VIRTUAL"):
                continue
            columns = {c["name"] for c in self.db.query(f"PRAGMA table_info({name})")}
            if "user_id" in columns:
                names.append(name)
        return sorted(names)

    def move_rows(self, table: str, dest: str, source: str) -> tuple[int, int]:
        """Move ``source``'s rows of ``table`` to ``dest``. A row whose key ``dest`` already
        has stays. Returns (moved, left behind)."""
        try:
            return self.db.execute(
                f"UPDATE {table} SET user_id = ? WHERE user_id = ?", (dest, source)
            ), 0
        except DatabaseError:
            moved = self.db.execute(
                f"UPDATE OR IGNORE {table} SET user_id = ? WHERE user_id = ?", (dest, source)
            )
            left = self.db.scalar(f"SELECT count(*) FROM {table} WHERE user_id = ?", (source,))
            return moved, int(left or 0)

    def drop_expired_leases(self, user_id: str) -> None:
        self.db.execute("DELETE FROM leases WHERE user_id = ? AND expires_at < ?",
                        (user_id, self.db.clock.now()))

    def fold_user(self, dest: str, absorbed: User) -> None:
        """``dest`` keeps its own profile, filling gaps from ``absorbed``; ``absorbed`` points
        at ``dest`` from now on."""
        self.db.execute(
            "UPDATE users SET is_owner = max(is_owner, ?), display_name = coalesce(display_name,"
            " ?), timezone = coalesce(timezone, ?), model = coalesce(model, ?) WHERE id = ?",
            (
                int(absorbed.is_owner), absorbed.display_name, absorbed.timezone, absorbed.model,
                dest,
            ),
        )
        self.db.execute("UPDATE users SET merged_into = ? WHERE id = ?", (dest, absorbed.id))
