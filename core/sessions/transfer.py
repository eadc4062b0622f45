"""Sessions in and out as JSON lines: bulk import of past conversations, and exports in Iris' own
line format (re-importable), OpenAI fine-tuning JSONL and ShareGPT.

Import line format::

    {"user": "alice" | "usr_…" | "telegram:42", "session_id": "s-1",
     "started_at": "2024-05-01T10:00:00Z", "title": "optional",
     "messages": [{"role": "user", "content": "…", "timestamp": "…", "id": "t-1"}, …]}

A message's images come as ``images: [{"id": …, "mime_type": …, "data_url": "data:…"}]`` (what
the ``iris`` export writes) or as OpenAI-style ``content`` parts (``{"type": "image_url",
"image_url": {"url": "data:…"}}``); ``core.sessions.import_images`` checks and stores them.
Unknown fields are ignored. The whole file is validated before anything is written.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.errors import IrisUsageError, NotFound
from core.store.transcripts import ImportedMessage

if TYPE_CHECKING:
    from core.messages import ImageRef, Message
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


class ImageItem(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str | None = Field(default=None, max_length=200)
    mime_type: str | None = None
    data_url: str | None = None
    url: str | None = None


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="ignore")
    type: str
    text: str | None = None
    image_url: dict[str, Any] | str | None = None

    def url(self) -> str | None:
        if isinstance(self.image_url, dict):
            url = self.image_url.get("url")
            return url if isinstance(url, str) else None
        return self.image_url


class LineMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")
    role: Literal["user", "assistant", "system", "tool"]
    content: str | list[ContentPart]
    images: list[ImageItem] | None = None
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

    @field_validator("tool_calls")
    @classmethod
    def _calls(cls, value: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
        """Each call in OpenAI's shape (what ``sessions show`` and export read back later)."""
        for n, call in enumerate(value or ()):
            function = call.get("function")
            if not (isinstance(call.get("id"), str) and call["id"] and isinstance(function, dict)
                    and isinstance(function.get("name"), str) and function["name"]
                    and isinstance(function.get("arguments", ""), str)):
                raise ValueError(f"call {n} needs an id and function.name and "
                                 "function.arguments as text")
        return value

    @field_validator("content")
    @classmethod
    def _parts(cls, value: str | list[ContentPart]) -> str | list[ContentPart]:
        for part in value if isinstance(value, list) else ():
            if part.type == "text" and part.text is None:
                raise ValueError("a text part needs its text")
            if part.type == "image_url" and not part.url():
                raise ValueError("an image_url part needs image_url.url")
            if part.type not in ("text", "image_url"):
                raise ValueError(f"content part type {part.type!r} is not supported "
                                 "(text and image_url are)")
        return value

    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return "\n".join(p.text or "" for p in self.content if p.type == "text")

    def image_sources(self) -> list[tuple[str | None, str | None]]:
        """(URL, id in the file) of each image: ``images`` first, then image parts."""
        sources = [(i.data_url or i.url, i.id) for i in self.images or ()]
        if isinstance(self.content, list):
            sources += [(p.url(), None) for p in self.content if p.type == "image_url"]
        return sources


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

    def imported_messages(self, images: list[str | None] | None = None
                          ) -> list[ImportedMessage]:
        """The messages to store; ``images`` (one JSON list or None per message) links the
        images already stored for them."""
        start = parse_time(self.started_at)
        out = []
        for number, m in enumerate(self.messages):
            calls = None
            if m.tool_calls:
                calls = json.dumps(m.tool_calls)
            out.append(ImportedMessage(
                role=m.role, content=m.text(),
                created_at=parse_time(m.timestamp) if m.timestamp is not None else start,
                external_id=None if m.id is None else str(m.id), tool_calls=calls,
                tool_call_id=m.tool_call_id, name=m.name,
                images=images[number] if images else None,
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


DROP_KINDS = {"url": "http(s) URL not fetched", "refused": "refused by the image checks",
              "missing": "without bytes in the file"}


@dataclass(frozen=True)
class ImportReport:
    sessions: int
    skipped: int
    messages: int
    users: dict[str, str]  # reference in the file -> user id
    images_stored: int = 0  # stored or linked for the messages written by this import
    images_dropped: dict[str, int] = field(default_factory=dict)  # kind -> count
    image_notes: tuple[str, ...] = ()  # one line per image not imported, with its reason

    def images_line(self) -> str | None:
        """``images: N stored, M not imported (…)``, or None when the import had no images."""
        dropped = sum(self.images_dropped.values())
        if not self.images_stored and not dropped:
            return None
        line = f"images: {self.images_stored} stored, {dropped} not imported"
        if dropped:
            line += " (" + ", ".join(f"{n} {DROP_KINDS[kind]}" for kind, n
                                     in sorted(self.images_dropped.items())) + ")"
        return line


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


def _note(line: SessionLine, position: int, number: int, reason: str) -> str:
    message = line.messages[position]
    which = f"message {position + 1}" + ("" if message.id is None else f" (id {message.id})")
    return (f"{line.user} session {line.session_id} {which}: image {number} not imported: "
            f"{reason}; the message's text was imported")


def import_sessions(store: Store, lines: list[SessionLine], *, create_users: bool = True,
                    image_max_bytes: int | None = None) -> ImportReport:
    """Import validated lines in one transaction: a refused line leaves everything as it was.

    Images are checked before anything is written and stored for the importing user; an image
    that cannot be taken is reported (``image_notes``) and its message imported without it. A
    session imported before its images were kept gets them on a later import of the same file.
    Should the import fail, the images it stored are deleted again."""
    from core.config import Settings
    from core.sessions.import_images import (
        Kept,
        MessageImages,
        Written,
        check_images,
        store_images,
    )

    cap = image_max_bytes or Settings.model_fields["image_max_bytes"].default
    checked = [[check_images(m.image_sources(), cap) for m in line.messages] for line in lines]
    users: dict[str, str] = {}
    created = skipped = count = stored = 0
    dropped: dict[str, int] = {}
    notes: list[str] = []
    written = Written()

    def kept(line: SessionLine, found: MessageImages, position: int, user_id: str) -> Kept:
        result = store_images(found, user_id, store.objects, written)
        nonlocal stored
        stored += len(result.refs)
        for drop in result.dropped:
            dropped[drop.kind] = dropped.get(drop.kind, 0) + 1
            notes.append(_note(line, position, drop.number, drop.reason))
        return result

    try:
        with store.transaction():
            for line in lines:
                if line.user not in users:
                    users[line.user] = resolve_import_user(store, line.user, create=create_users)
            for line, checked_by_line in zip(lines, checked, strict=True):
                user = users[line.user]
                existing = store.transcripts.find_external(user, line.session_id)
                images: list[str | None] = [None] * len(line.messages)
                if existing is None:
                    images = [kept(line, found, n, user).json() if found else None
                              for n, found in enumerate(checked_by_line)]
                messages = line.imported_messages(images)
                session_id, new = store.transcripts.import_session(
                    user, external_id=line.session_id,
                    started_at=parse_time(line.started_at), title=line.title, messages=messages,
                )
                if not new:
                    for position, row in enumerate(store.transcripts.rows_without_images(
                            user, session_id)):
                        if row is not None and checked_by_line[position].wanted:
                            images_json = kept(line, checked_by_line[position], position,
                                               user).json()
                            if images_json:
                                store.transcripts.set_images(user, row, images_json)
                created += new
                skipped += not new
                count += len(messages) if new else 0
    except BaseException:
        if written.keys:
            written.undo(store.objects)
        raise
    return ImportReport(sessions=created, skipped=skipped, messages=count, users=users,
                        images_stored=stored, images_dropped=dropped, image_notes=tuple(notes))


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
    from core.intake.images import ImageNotFound, data_url, load_image

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


def _with_image_markers(message: Message) -> str:
    """ShareGPT has no image parts: each image becomes ``[image: <id>]`` after the text."""
    markers = [f"[image: {image.id}]" for image in message.images]
    return "\n".join([message.content, *markers] if message.content else markers)


def _sharegpt_turns(messages: list[StoredMessage], system: str | None) -> list[dict[str, str]]:
    turns = [{"from": "system", "value": system}] if system else []
    for stored in messages:
        m = stored.message
        if m.role == "user":
            turns.append({"from": "human", "value": _with_image_markers(m)})
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
