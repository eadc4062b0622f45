"""The Store facade: callers never see SQL or object-store calls.

Every method that reads or writes user data takes the owning user id; there is no query path
without it. The few system sweeps (stalled chats, due deliveries) return keys, never content.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.messages import Message, Usage
from core.store.bots import BotIdentities
from core.store.cancels import TurnCancels
from core.store.compaction import Compaction
from core.store.db import Database
from core.store.deliveries import Deliveries
from core.store.inbox import Inbox, InboxEntry
from core.store.leases import Leases
from core.store.migrations import migrate
from core.store.search import SearchIndex
from core.store.sessions import Messages, Sessions
from core.store.transcripts import Transcripts
from core.store.usage import UsageLog
from core.store.users import Users
from core.store.vectors import Vectors

if TYPE_CHECKING:
    from core.clock import Clock
    from core.config import Settings
    from core.memory.repository import MemoryRepository
    from core.scheduler.jobs import CronJobs
    from core.store.objects import ObjectStore


class TurnAlreadyFinished(Exception):
    """Another worker finished this inbox entry first; this turn's results were discarded."""


@dataclass(frozen=True)
class OutboundReply:
    platform: str
    target: dict[str, Any]
    text: str
    chat_key: str | None = None  # the chat it goes to, when not the entry's own (cron jobs)


@dataclass(frozen=True)
class TurnRecord:
    entry: InboxEntry
    session_id: str
    messages: list[Message]
    usage: list[Usage] = field(default_factory=list)
    reply: str | None = None
    status: str = "done"
    error: str | None = None
    outbound: OutboundReply | None = None


class Store:
    def __init__(
        self, db: Database, *, objects_url: str | None = None,
        s3_endpoint_url: str | None = None, s3_region: str | None = None,
    ):
        self.db = db
        self.users = Users(db)
        self.sessions = Sessions(db)
        self.messages = Messages(db)
        self.inbox = Inbox(db)
        self.leases = Leases(db)
        self.usage = UsageLog(db)
        self.deliveries = Deliveries(db)
        self.cancels = TurnCancels(db)
        self.search = SearchIndex(db)
        self.compaction = Compaction(db)
        self.transcripts = Transcripts(db)
        self.vectors = Vectors(db)
        self.bots = BotIdentities(db)
        self._objects_args = (objects_url, s3_endpoint_url, s3_region)
        self._objects: ObjectStore | None = None
        self._memory: MemoryRepository | None = None
        self._cron: CronJobs | None = None

    @property
    def clock(self) -> Clock:
        return self.db.clock

    @property
    def objects(self) -> ObjectStore:
        """The object store, opened on first use (keeps boto3 off the webhook ack path)."""
        if self._objects is None:
            from core.store.objects import open_object_store

            url, endpoint, region = self._objects_args
            if not url:
                raise RuntimeError("this store was opened without an object store")
            self._objects = open_object_store(url, s3_endpoint_url=endpoint, s3_region=region)
        return self._objects

    @property
    def memory(self) -> MemoryRepository:
        """Per-user memory entries and their archive (``core.memory``)."""
        from core.memory.repository import MemoryRepository

        if self._memory is None:
            self._memory = MemoryRepository(self.db)
        return self._memory

    @property
    def cron(self) -> CronJobs:
        """Scheduled jobs and their runs (``core.scheduler``; croniter stays off the ack path)."""
        from core.scheduler.jobs import CronJobs

        if self._cron is None:
            self._cron = CronJobs(self.db)
        return self._cron

    def commit_turn(self, record: TurnRecord) -> int | None:
        """Store a turn's messages and usage, mark its inbox entry finished and record the reply
        to deliver, all in one transaction. Returns the delivery id (None when nothing is sent).
        Raises TurnAlreadyFinished (and stores nothing) if the entry was finished meanwhile."""
        entry = record.entry
        at = self.clock.now()
        with self.db.transaction():
            if not self.inbox.finish(
                entry.user_id, entry.id, status=record.status, session_id=record.session_id,
                reply=record.reply, error=record.error,
            ):
                raise TurnAlreadyFinished(f"inbox entry {entry.id} is already finished")
            self.messages.insert(
                entry.user_id, record.session_id, record.messages, at=at,
                author=entry.message.account, inbox_id=entry.id,
            )
            for usage in record.usage:
                self.usage.record(
                    entry.user_id, usage, session_id=record.session_id, inbox_id=entry.id
                )
            self.db.execute(
                "UPDATE sessions SET last_active_at = ? WHERE user_id = ? AND id = ?",
                (at, entry.user_id, record.session_id),
            )
            if record.outbound is None:
                return None
            return self.deliveries.add(
                entry.user_id, source=f"inbox:{entry.id}", platform=record.outbound.platform,
                chat_key=record.outbound.chat_key or entry.chat_key, target=record.outbound.target,
                text=record.outbound.text,
            )

    def close(self) -> None:
        self.db.close()


def open_store(settings: Settings, *, clock: Clock | None = None) -> Store:
    """Open the configured database (applying migrations) and object store. ``clock``: the
    time source for everything stored (default: the system clock)."""
    from core.clock import SYSTEM_CLOCK

    db = Database(settings.db_url, settings.secret("db_auth_token"), clock=clock or SYSTEM_CLOCK)
    migrate(db)
    return Store(
        db, objects_url=settings.objects_url, s3_endpoint_url=settings.s3_endpoint_url,
        s3_region=settings.s3_region,
    )
