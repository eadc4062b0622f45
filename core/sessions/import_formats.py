"""Conversations that name no user and no session — OpenAI chat JSONL and ShareGPT, as
``iris sessions export`` writes them or as other tools do — read as session lines for one user.

OpenAI chat format: one ``{"messages": [{"role": …, "content": …}, …]}`` per line (the
fine-tuning shape; ``tool_calls``/``tool`` messages and ``image_url`` parts kept). ShareGPT: a
JSON array (or JSON lines) of ``{"conversations": [{"from": "human"|"gpt"|"system"|
"function_call"|"observation", "value": …}], "system": optional}``. Each conversation becomes a
session whose id is derived from its messages, so importing the same file again adds nothing.
The file is checked whole before anything is written; the first problem names its line (or its
place in the array) and nothing is imported.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.errors import IrisUsageError
from core.sessions.transfer import LineMessage, SessionLine, read_lines

ImportFormat = Literal["iris", "openai-jsonl", "sharegpt"]
IMPORT_FORMATS: tuple[str, ...] = ("iris", "openai-jsonl", "sharegpt")
MAX_IMPORT_BYTES = 256 * 1024 * 1024  # the file is validated whole in memory before writing
PREFIX = {"openai-jsonl": "openai", "sharegpt": "sharegpt"}
OPENAI_ROLES = ("system", "developer", "user", "assistant", "tool")
SHAREGPT_ROLES = {"system": "system", "human": "user", "user": "user", "gpt": "assistant",
                  "assistant": "assistant"}


@dataclass(frozen=True)
class Record:
    where: str  # "history.jsonl:3" or "export.json: conversation 2"
    data: Any


@dataclass(frozen=True)
class Conversation:
    where: str
    messages: tuple[LineMessage, ...]
    session_id: str


@dataclass(frozen=True)
class Parsed:
    fmt: ImportFormat
    lines: tuple[SessionLine, ...] = ()  # iris: complete lines, users included
    conversations: tuple[Conversation, ...] = ()  # other formats: need a user


def decode(raw: bytes, source: str) -> str:
    if len(raw) > MAX_IMPORT_BYTES:
        raise IrisUsageError(f"{source} is over {MAX_IMPORT_BYTES // 2**20} MiB; split it into "
                             "smaller files and import them one by one")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise IrisUsageError(f"{source}:{line}: not UTF-8 text") from None
    if not text.strip():
        raise IrisUsageError(f"{source} is empty: nothing to import")
    return text


def _lines(text: str) -> list[str]:
    """Lines split at newlines only: a JSON string may hold U+2028 or U+0085 unescaped."""
    return text.split("\n")


def _records(text: str, source: str) -> list[Record]:
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise IrisUsageError(f"{source}:{exc.lineno}: not valid JSON ({exc.msg})") from None
        if not data:
            raise IrisUsageError(f"{source} holds an empty list: nothing to import")
        return [Record(f"{source}: conversation {n}", item) for n, item in enumerate(data, 1)]
    return [_line(raw, source, number) for number, raw in enumerate(_lines(text), 1)
            if raw.strip()]


def _line(raw: str, source: str, number: int) -> Record:
    try:
        return Record(f"{source}:{number}", json.loads(raw))
    except json.JSONDecodeError as exc:
        raise IrisUsageError(f"{source}:{number}: not valid JSON ({exc.msg})") from None


def _iris_lines(text: str, source: str, fmt: str) -> bool:
    """Whether a file of JSON lines is read as Iris lines (named, or its first line is one)."""
    if fmt != "auto" or text.lstrip().startswith("["):
        return fmt == "iris"
    number, line = next((n, line) for n, line in enumerate(_lines(text), 1) if line.strip())
    return detect(_line(line, source, number)) == "iris"


def detect(record: Record) -> ImportFormat:
    data = record.data
    if isinstance(data, dict):
        if "conversations" in data:
            return "sharegpt"
        if "messages" in data:
            return "iris" if "user" in data or "session_id" in data else "openai-jsonl"
    raise IrisUsageError(
        f"{record.where}: cannot tell the file's format: expected {{\"messages\": [...]}} "
        "(openai-jsonl), {\"conversations\": [...]} (sharegpt) or Iris lines with \"user\" and "
        "\"session_id\" (iris); name it with --format")


def read_import(raw: bytes, source: str, fmt: str = "auto") -> Parsed:
    """Check a whole import file; ``fmt`` is one of IMPORT_FORMATS or ``auto`` (by content)."""
    if fmt != "auto" and fmt not in IMPORT_FORMATS:
        raise IrisUsageError(f"unknown import format {fmt!r}; choose auto or one of "
                             f"{', '.join(IMPORT_FORMATS)}")
    text = decode(raw, source)
    if _iris_lines(text, source, fmt):
        return Parsed("iris", lines=tuple(read_lines(_lines(text), source=source)))
    records = _records(text, source)
    chosen = detect(records[0]) if fmt == "auto" else cast(ImportFormat, fmt)
    if chosen == "iris":
        raise IrisUsageError(f"{source}: Iris lines are one JSON object per line, not a list")
    read = _openai if chosen == "openai-jsonl" else _sharegpt
    conversations = []
    for record in records:
        if not isinstance(record.data, dict):
            raise IrisUsageError(f"{record.where}: each conversation must be a JSON object")
        messages = read(record)
        conversations.append(Conversation(record.where, messages, _session_id(chosen, messages)))
    return Parsed(chosen, conversations=tuple(conversations))


def _session_id(fmt: str, messages: tuple[LineMessage, ...]) -> str:
    canonical = json.dumps([m.model_dump(mode="json", exclude_none=True) for m in messages],
                           sort_keys=True, ensure_ascii=False)
    return f"{PREFIX[fmt]}-{hashlib.sha256(canonical.encode()).hexdigest()[:24]}"


def _first_error(exc: ValidationError, prefix: str) -> str:
    error = exc.errors()[0]
    where = ".".join([prefix, *(str(p) for p in error["loc"])]).strip(".") or "record"
    return f"{where}: {str(error['msg']).removeprefix('Value error, ')}"


def _message(record: Record, where: str, data: dict[str, Any]) -> LineMessage:
    try:
        return LineMessage.model_validate(data)
    except ValidationError as exc:
        raise IrisUsageError(f"{record.where}: {_first_error(exc, where)}") from None


def _calls(record: Record, where: str, calls: Any) -> list[dict[str, Any]]:
    """Tool calls in OpenAI's shape, arguments as JSON text (an object is serialised)."""
    if not isinstance(calls, list) or not calls:
        raise IrisUsageError(f"{record.where}: {where}.tool_calls: expected a non-empty list")
    out = []
    for n, call in enumerate(calls):
        function = call.get("function") if isinstance(call, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        arguments = function.get("arguments", "") if isinstance(function, dict) else None
        if isinstance(arguments, dict):
            arguments = json.dumps(arguments, ensure_ascii=False)
        call_id = call.get("id") if isinstance(call, dict) else None
        if not (isinstance(call_id, str) and call_id and isinstance(name, str) and name
                and isinstance(arguments, str)):
            raise IrisUsageError(
                f"{record.where}: {where}.tool_calls.{n}: expected {{\"id\": …, \"type\": "
                "\"function\", \"function\": {\"name\": …, \"arguments\": …}}")
        out.append({"id": call_id, "type": "function",
                    "function": {"name": name, "arguments": arguments}})
    return out


class _OpenAIConversation(BaseModel):
    model_config = ConfigDict(extra="ignore")
    messages: list[dict[str, Any]] = Field(min_length=1)


def _openai(record: Record) -> tuple[LineMessage, ...]:
    try:
        conversation = _OpenAIConversation.model_validate(record.data)
    except ValidationError as exc:
        raise IrisUsageError(f"{record.where}: {_first_error(exc, '')}") from None
    messages: list[LineMessage] = []
    called: set[str] = set()
    for n, item in enumerate(conversation.messages):
        where = f"messages.{n}"
        role = item.get("role")
        if role not in OPENAI_ROLES:
            raise IrisUsageError(f"{record.where}: {where}.role: unknown role {role!r} (one of "
                                 f"{', '.join(OPENAI_ROLES)})")
        data = dict(item, role="system" if role == "developer" else role)
        data.pop("timestamp", None)
        data.pop("images", None)
        if data.get("tool_calls") is not None:
            if role != "assistant":
                raise IrisUsageError(f"{record.where}: {where}: only assistant messages make "
                                     "tool calls")
            data["tool_calls"] = _calls(record, where, data["tool_calls"])
            called.update(c["id"] for c in data["tool_calls"])
        if data.get("content") is None and (data.get("tool_calls") or role == "assistant"):
            data["content"] = ""
        if role == "tool" and data.get("tool_call_id") not in called:
            raise IrisUsageError(f"{record.where}: {where}: a tool message needs the "
                                 "tool_call_id of an earlier assistant tool call")
        messages.append(_message(record, where, data))
    return tuple(messages)


class _Turn(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)
    speaker: str = Field(alias="from")
    value: str


class _ShareGPTConversation(BaseModel):
    model_config = ConfigDict(extra="ignore")
    conversations: list[_Turn] = Field(min_length=1)
    system: str | None = None


def _function_call(record: Record, where: str, value: str, number: int) -> dict[str, Any]:
    try:
        data = json.loads(value)
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        raise IrisUsageError(f"{record.where}: {where}.value: a function_call turn holds JSON "
                             "{\"name\": …, \"arguments\": …}")
    call = {"id": f"call_{number}", "function": {"name": data["name"],
                                                  "arguments": data.get("arguments", "")}}
    return _calls(record, where, [call])[0]


def _sharegpt(record: Record) -> tuple[LineMessage, ...]:
    try:
        conversation = _ShareGPTConversation.model_validate(record.data)
    except ValidationError as exc:
        raise IrisUsageError(f"{record.where}: {_first_error(exc, '')}") from None
    items: list[dict[str, Any]] = []
    if conversation.system:
        items.append({"role": "system", "content": conversation.system})
    pending: list[str] = []  # calls not answered yet, in order
    calls = 0
    for n, turn in enumerate(conversation.conversations):
        where = f"conversations.{n}"
        if turn.speaker == "function_call":
            calls += 1
            call = _function_call(record, where, turn.value, calls)
            pending.append(call["id"])
            last = items[-1] if items else None
            if last is not None and last["role"] == "assistant":
                last.setdefault("tool_calls", []).append(call)
            else:
                items.append({"role": "assistant", "content": "", "tool_calls": [call]})
        elif turn.speaker == "observation":
            if not pending:
                raise IrisUsageError(f"{record.where}: {where}: an observation turn needs a "
                                     "function_call turn before it")
            items.append({"role": "tool", "content": turn.value, "tool_call_id": pending.pop(0)})
        elif turn.speaker in SHAREGPT_ROLES:
            items.append({"role": SHAREGPT_ROLES[turn.speaker], "content": turn.value})
        else:
            raise IrisUsageError(
                f"{record.where}: {where}.from: unknown speaker {turn.speaker!r} (one of "
                "human, gpt, system, function_call, observation)")
    return tuple(_message(record, f"message {n + 1}", item) for n, item in enumerate(items))


def session_lines(conversations: tuple[Conversation, ...], user_ref: str, *,
                  started_at: float) -> list[SessionLine]:
    """The conversations as iris lines of one user, stamped ``started_at`` (in order)."""
    lines = []
    for conversation in conversations:
        messages = [m.model_copy(update={"timestamp": started_at + n / 1000})
                    for n, m in enumerate(conversation.messages)]
        lines.append(SessionLine(user=user_ref, session_id=conversation.session_id,
                                 started_at=started_at, messages=messages))
    return lines
