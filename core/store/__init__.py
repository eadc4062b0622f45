"""The Store facade: callers never see SQL or object-store calls.

Every method that reads or writes user data takes the owning user id; there is no query path
without it. The few system sweeps (stalled chats, due deliveries) return keys, never content.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from core.store.access import AccountStates, PairingRequests
from core.store.acting import HeldCommands, SandboxStates
from core.store.bots import BotIdentities
from core.store.cancels import TurnCancels
from core.store.clarifications import Clarifications
from core.store.compaction import Compaction
from core.store.cron import CronTables
from core.store.dashboard import DashboardAccess
from core.store.db import Database, Result, Statement
from core.store.deliveries import Deliveries
from core.store.drains import Drains
from core.store.event_hooks import EventHooks
from core.store.held_writes import HeldWrites
from core.store.imports import Imports
from core.store.inbox import Inbox
from core.store.kept_attachments import KeptAttachments
from core.store.leases import Leases
from core.store.links import LinkCodes
from core.store.memory import MemoryRows
from core.store.migrations import applied_count, migrate
from core.store.objects_base import CHECKSUMS_WHEN_REQUIRED
from core.store.personas import Personas
from core.store.rehoming import Rehoming
from core.store.search import SearchIndex
from core.store.session_tools import SessionTools
from core.store.sessions import Messages, Sessions
from core.store.skill_quarantine import SkillQuarantine
from core.store.skill_vectors import SkillVectors
from core.store.skills import SkillCatalog
from core.store.team_bindings import TeamBindings
from core.store.team_notes import TeamNotes
from core.store.team_skills import TeamSkills
from core.store.teams import Teams
from core.store.todos import SessionTodos
from core.store.transcripts import Transcripts
from core.store.usage import UsageLog
from core.store.users import Users
from core.store.vectors import Vectors
from core.store.webhooks import UserWebhooks

if TYPE_CHECKING:
    from core.clock import Clock
    from core.config import Settings
    from core.store.objects import ObjectStore


class Store:
    def __init__(
        self, db: Database, *, objects_url: str | None = None,
        s3_endpoint_url: str | None = None, s3_region: str | None = None,
        s3_timeout: float = 60.0, s3_checksums: tuple[str, str] = CHECKSUMS_WHEN_REQUIRED,
    ):
        self.db = db
        self.users = Users(db)
        self.sessions = Sessions(db)
        self.messages = Messages(db)
        self.drains = Drains(db)
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
        self.memory = MemoryRows(db)
        self.access = AccountStates(db)
        self.pairing = PairingRequests(db)
        self.links = LinkCodes(db)
        self.rehoming = Rehoming(db)
        self.skills = SkillCatalog(db)
        self.skill_vectors = SkillVectors(db)
        self.skill_quarantine = SkillQuarantine(db)
        self.sandbox_states = SandboxStates(db)
        self.held = HeldCommands(db)
        self.held_writes = HeldWrites(db)
        self.session_tools = SessionTools(db)
        self.todos = SessionTodos(db)
        self.clarifications = Clarifications(db)
        self.cron = CronTables(db)
        self.personas = Personas(db)
        self.imports = Imports(db)
        self.webhooks = UserWebhooks(db)
        self.event_hooks = EventHooks(db)
        self.dashboard = DashboardAccess(db)
        self.kept_attachments = KeptAttachments(db)
        self.teams = Teams(db)
        self.team_notes = TeamNotes(db, self.teams)
        self.team_bindings = TeamBindings(db, self.teams)
        self.team_skills = TeamSkills(db, self.teams)
        self._objects_args = (objects_url, s3_endpoint_url, s3_region, s3_timeout, s3_checksums)
        self._objects: ObjectStore | None = None

    def batch(self, statements: Sequence[Statement]) -> list[Result]:
        """Statements built by the repositories, run in order as one request to a remote
        database (see ``Database.batch``)."""
        return self.db.batch(statements)

    @property
    def clock(self) -> Clock:
        return self.db.clock

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction around several repositories' calls (nested use joins it)."""
        with self.db.transaction():
            yield

    def migrations_applied(self) -> int:
        return applied_count(self.db)

    @property
    def objects(self) -> ObjectStore:
        """The object store, opened on first use (keeps boto3 off the webhook ack path)."""
        if self._objects is None:
            from core.store.objects import open_object_store

            url, endpoint, region, timeout, checksums = self._objects_args
            if not url:
                raise RuntimeError("this store was opened without an object store")
            self._objects = open_object_store(url, s3_endpoint_url=endpoint, s3_region=region,
                                              s3_timeout=timeout, s3_checksums=checksums)
        return self._objects

    def close(self) -> None:
        self.db.close()


# A check asks whether the database answers now: a few seconds of retries, not the 30 s a
# running deployment rides out a blip with (`iris doctor`, `iris deploy`'s preflight, saving a
# bot's name while registering its webhook).
CHECK_RETRY_SECONDS = 5.0


def open_store(settings: Settings, *, clock: Clock | None = None,
               retry_for: float = 30.0) -> Store:
    """Open the configured database (applying migrations) and object store. ``clock``: the
    time source for everything stored (default: the system clock); ``retry_for``: how long a
    remote database that cannot be reached is tried again before it is an error."""
    from core.clock import SYSTEM_CLOCK

    db = Database(settings.db_url, settings.secret("db_auth_token"), clock=clock or SYSTEM_CLOCK,
                  retry_for=retry_for)
    migrate(db)
    return Store(
        db, objects_url=settings.objects_url, s3_endpoint_url=settings.s3_endpoint_url,
        s3_region=settings.s3_region, s3_timeout=settings.s3_timeout,
        s3_checksums=(settings.s3_request_checksum_calculation,
                      settings.s3_response_checksum_validation),
    )
