"""A worker's steps on a chat, each one round trip to a remote database.

``take`` takes (or keeps) the chat's lease and counts an attempt on its next pending entry, in
one transaction that also lets the lease go when nothing is pending, then reads that entry
back with what its turn reads first (the chat's open session, the user). Letting the lease go
in the same transaction that finds nothing pending means a message recorded after it finds the
lease free, and one recorded before it is found: nothing is stranded, no second look needed.
"""

from __future__ import annotations

from core.store.cancels import cancel_requested
from core.store.clarifications import latest_question
from core.store.compaction import latest_summary
from core.store.db import Database
from core.store.inbox import InboxEntry
from core.store.memory import archive_count, memory_entry_rows
from core.store.personas import persona_row
from core.store.session_tools import loaded_rows
from core.store.sessions import latest_session, message_tail
from core.store.skills import skill_rows, skill_usage_rows
from core.store.users import user_row

_NEXT = ("SELECT * FROM inbox WHERE user_id = ? AND chat_key = ? AND status = 'pending'"
         " ORDER BY id LIMIT 1")


class Drains:
    def __init__(self, db: Database):
        self.db = db

    def take(self, user_id: str, chat_key: str, lease: str, owner: str,
             ttl: float) -> InboxEntry | None:
        """The chat's next pending entry, its attempt counted, with the lease held by
        ``owner``; None when another worker holds the lease or nothing is pending (then the
        lease is let go)."""
        at = self.db.clock.now()
        writes = [
            ("INSERT INTO leases (name, user_id, owner, expires_at) VALUES (?, ?, ?, ?)"
             " ON CONFLICT (name) DO UPDATE SET owner = excluded.owner,"
             " expires_at = excluded.expires_at, user_id = excluded.user_id"
             " WHERE leases.expires_at < ? OR leases.owner = excluded.owner",
             (lease, user_id, owner, at + ttl, at)),
            ("UPDATE inbox SET attempts = attempts + 1, started_at = ? WHERE user_id = ?"
             " AND id = (SELECT id FROM inbox WHERE user_id = ? AND chat_key = ?"
             " AND status = 'pending' ORDER BY id LIMIT 1)"
             " AND EXISTS (SELECT 1 FROM leases WHERE name = ? AND owner = ?)",
             (at, user_id, user_id, chat_key, lease, owner)),
            ("DELETE FROM leases WHERE name = ? AND owner = ? AND NOT EXISTS (SELECT 1 FROM"
             " inbox WHERE user_id = ? AND chat_key = ? AND status = 'pending')",
             (lease, owner, user_id, chat_key)),
        ]
        reads = [("SELECT owner FROM leases WHERE name = ?", (lease,)),
                 (_NEXT, (user_id, chat_key))]
        keep = [latest_session(user_id, chat_key), user_row(user_id)]
        _, (holder, pending) = self.db.write_then_read(writes, reads, keep)
        if not holder or holder[0]["owner"] != owner or not pending:
            return None
        return InboxEntry.from_row(pending[0])

    def prefetch_prompt(self, user_id: str) -> None:
        """Read at once what building a session's system prompt reads (the user, persona,
        memory snapshot, skill index inputs), for the queries that follow."""
        self.db.prefetch([
            user_row(user_id), persona_row(user_id), memory_entry_rows(user_id),
            memory_entry_rows(user_id), archive_count(user_id), skill_usage_rows(user_id),
            skill_rows(user_id), skill_usage_rows(user_id),
        ])

    def prefetch_context(self, user_id: str, session_id: str, inbox_id: int | None, *,
                         history: int, chat_key: str | None = None) -> None:
        """Read at once what a turn's prompt needs from its session (history, summary, the
        catalogue tools it loaded), whether it was stopped, and (with ``chat_key``) the chat's
        latest ``clarify`` question, for the queries that follow."""
        reads = [message_tail(user_id, session_id, history), latest_summary(user_id, session_id),
                 loaded_rows(user_id, session_id)]
        if chat_key is not None:
            reads.append(latest_question(user_id, chat_key))
        if inbox_id is not None:
            reads.append(cancel_requested(user_id, inbox_id))
        self.db.prefetch(reads)
