"""Sessions in and out as JSON lines: bulk import of past conversations, and exports in Iris' own
line format (re-importable), OpenAI fine-tuning JSONL and ShareGPT.

Import line format::

    {"user": "alice" | "usr_…" | "telegram:42", "session_id": "s-1",
     "started_at": "2024-05-01T10:00:00Z", "title": "optional",
     "messages": [{"role": "user", "content": "…", "timestamp": "…", "id": "t-1"}, …]}

Unknown fields are ignored. The whole file is validated before anything is written.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.errors import IrisUsageError, NotFound
from core.store.transcripts import ImportedMessage

if TYPE_CHECKING:
    from core.messages import ImageRef
    from core.store import Store
    from core.store.sessions import Session, StoredMessage

ExportFormat = Literal["iris", "openai-jsonl", "sharegpt"]
FORMATS: tuple[str, ...] = ("iris", "openai-jsonl", "sharegpt")


def parse_time(value: Any, *, field: str = "timestamp") -> float:
    """ISO-8601 (naive means UTC) or a Unix epoch number → epoch seconds."""
    where = f"{field}: " if field else ""
    if isinstance(value, bool):
        raise ValueError(f"{where}expected an ISO-8601 time, got {value!r}")
    if isinstance(value, int | float):
        return float(value)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}expected an ISO-8601 time, got {value!r}")
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{where}not an ISO-8601 time: {value!r}") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


class LineMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")
    role: Literal["user", "assistant", "system", "tool"]
    content: str
    timestamp: str | float | None = None
    id: str | int | None = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None
    name: str | None = None

    @field_validator("timestamp")
    @classmethod
    def _time(cls, value: str | float | None) -> str | float | None:
        if value is not None:
            parse_time(value, field="")
        return value


class SessionLine(BaseModel):
    model_config = ConfigDict(extra="ignore")
    user: str = Field(min_length=1, max_length=200)
    session_id: str = Field(min_length=1, max_length=200)
    started_at: str | float
    title: str | None = Field(default=None, max_length=500)
    messages: list[LineMessage]

    @field_validator("started_at")
    @classmethod
    def _started(cls, value: str | float) -> str | float:
        parse_time(value, field="")
        return value

    def imported_messages(self) -> list[ImportedMessage]:
        start = parse_time(self.started_at)
        out = []
        for m in self.messages:
            calls = None
            if m.tool_calls:
                calls = json.dumps(m.tool_calls)
            out.append(ImportedMessage(
                role=m.role, content=m.content,
                created_at=parse_time(m.timestamp) if m.timestamp is not None else start,
                external_id=None if m.id is None else str(m.id), tool_calls=calls,
                tool_call_id=m.tool_call_id, name=m.name,
            ))
        return out


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"]) or "line"
    return f"{where}: {str(error['msg']).removeprefix('Value error, ')}"


def read_lines(lines: Iterable[str], source: str = "input") -> list[SessionLine]:
    """Parse and validate every line; the first problem raises IrisUsageError naming the line."""
    parsed: list[SessionLine] = []
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise IrisUsageError(f"{source}:{number}: not valid JSON ({exc.msg})") from None
        if not isinstance(data, dict):
            raise IrisUsageError(f"{source}:{number}: each line must be a JSON object")
        try:
            parsed.append(SessionLine.model_validate(data))
        except ValidationError as exc:
            raise IrisUsageError(f"{source}:{number}: {_first_error(exc)}") from None
    return parsed


@dataclass(frozen=True)
class ImportReport:
    sessions: int
    skipped: int
    messages: int
    users: dict[str, str]  # reference in the file -> user id


def resolve_import_user(store: Store, ref: str, *, create: bool) -> str:
    """A user id for ``ref``: an existing user id or account; otherwise (with ``create``) a new
    user owning the account ``ref`` (``platform:id``) or ``http:<ref>`` for a bare name, the same
    user the HTTP API serves for ``"user": "<ref>"``."""
    try:
        return store.users.resolve(ref)
    except NotFound:
        if not create:
            raise
    account = ref if ":" in ref else f"http:{ref}"
    return store.users.for_account(account)


def import_sessions(store: Store, lines: list[SessionLine], *, create_users: bool = True
                    ) -> ImportReport:
    """Import validated lines in one transaction: a refused line leaves everything as it was."""
    users: dict[str, str] = {}
    created = skipped = count = 0
    with store.transaction():
        for line in lines:
            if line.user not in users:
                users[line.user] = resolve_import_user(store, line.user, create=create_users)
        for line in lines:
            messages = line.imported_messages()
            _, new = store.transcripts.import_session(
                users[line.user], external_id=line.session_id,
                started_at=parse_time(line.started_at), title=line.title, messages=messages,
            )
            created += new
            skipped += not new
            count += len(messages) if new else 0
    return ImportReport(sessions=created, skipped=skipped, messages=count, users=users)


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")


def _image_item(image: ImageRef) -> dict[str, str]:
    item = image.to_json()
    if image.url:
        item["data_url"] = image.url
    return item


def with_image_data(store: Store, user_id: str,
                    messages: list[StoredMessage]) -> list[StoredMessage]:
    """``messages`` with each stored image's bytes as a ``data:`` URL (an export carries the
    images themselves; one no longer stored keeps only its id)."""
    from core.images import ImageNotFound, data_url, load_image

    out = []
    for stored in messages:
        if stored.message.images:
            images = []
            for image in stored.message.images:
                try:
                    mime, data = load_image(store.objects, user_id, image.id)
                    images.append(replace(image, url=data_url(mime, data)))
                except ImageNotFound:
                    images.append(image)
            stored = replace(stored, message=replace(stored.message, images=tuple(images)))
        out.append(stored)
    return out


def _openai_message(stored: StoredMessage) -> dict[str, Any]:
    return stored.message.to_openai()


def _sharegpt_turns(messages: list[StoredMessage], system: str | None) -> list[dict[str, str]]:
    turns = [{"from": "system", "value": system}] if system else []
    for stored in messages:
        m = stored.message
        if m.role == "user":
            turns.append({"from": "human", "value": m.content})
        elif m.role == "assistant":
            if m.content:
                turns.append({"from": "gpt", "value": m.content})
            for call in m.tool_calls:
                try:
                    arguments: Any = call.parsed_arguments()
                except ValueError:
                    arguments = call.arguments
                turns.append({
                    "from": "function_call",
                    "value": json.dumps({"name": call.name, "arguments": arguments}),
                })
        elif m.role == "tool":
            turns.append({"from": "observation", "value": m.content})
        elif m.role == "system" and m.content:
            turns.append({"from": "system", "value": m.content})
    return turns


def export_record(
    session: Session, external_id: str | None, messages: list[StoredMessage], fmt: str,
    user_ref: str,
) -> dict[str, Any]:
    if fmt == "iris":
        out_messages = []
        for stored in messages:
            item: dict[str, Any] = {
                "role": stored.message.role, "content": stored.message.content,
                "timestamp": _iso(stored.created_at),
                "id": stored.external_id or f"iris:{stored.id}",
            }
            if stored.message.tool_calls:
                item["tool_calls"] = [c.to_openai() for c in stored.message.tool_calls]
            if stored.message.tool_call_id:
                item["tool_call_id"] = stored.message.tool_call_id
            if stored.message.role == "tool" and stored.message.name:
                item["name"] = stored.message.name
            if stored.message.images:
                item["images"] = [_image_item(i) for i in stored.message.images]
            out_messages.append(item)
        record: dict[str, Any] = {
            "user": user_ref, "session_id": external_id or session.id,
            "started_at": _iso(session.started_at), "messages": out_messages,
        }
        if session.title:
            record["title"] = session.title
        return record
    if fmt == "openai-jsonl":
        prefix = [{"role": "system", "content": session.system_prompt}] \
            if session.system_prompt else []
        return {"messages": prefix + [_openai_message(m) for m in messages]}
    if fmt == "sharegpt":
        return {"id": external_id or session.id,
                "conversations": _sharegpt_turns(messages, session.system_prompt)}
    raise IrisUsageError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")


def export_sessions(
    store: Store, user_ids: list[str], *, fmt: str, since: float | None = None,
    session_ref: str | None = None, embed_images: bool = True,
) -> Iterator[dict[str, Any]]:
    """One record per session (oldest first) for each user; trajectories keep tool calls, and
    images their bytes as ``data:`` URLs (unless ``embed_images`` is off)."""
    if fmt not in FORMATS:
        raise IrisUsageError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    for user_id in user_ids:
        accounts = store.users.accounts(user_id)
        user_ref = accounts[0] if accounts else user_id
        for row in store.transcripts.sessions(user_id, since=since, newest_first=False):
            if session_ref is not None and session_ref not in (row.session.id, row.external_id):
                continue
            messages = store.messages.for_session(user_id, row.session.id)
            if not messages:
                continue
            if embed_images:
                messages = with_image_data(store, user_id, messages)
            yield export_record(row.session, row.external_id, messages, fmt, user_ref)
