"""Typed messages: what flows between ingress, the turn loop, the model and the store."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]
Platform = Literal["http", "telegram", "slack", "whatsapp", "discord", "email", "cron", "cli",
                   "teams", "googlechat",
                   "line", "sms", "matrix"]


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # raw JSON text as the model produced it

    def parsed_arguments(self) -> dict[str, Any]:
        """The arguments as a dict; raises ValueError when the model produced invalid JSON."""
        if not self.arguments.strip():
            return {}
        value = json.loads(self.arguments)
        if not isinstance(value, dict):
            raise ValueError("tool arguments must be a JSON object")
        return value

    def to_openai(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True, kw_only=True)
class ImageRef:
    """An image the user sent, stored in their object store (``core.intake.images``). ``url`` (a
    ``data:`` URL) is filled in only for a model request, never stored."""

    id: str
    mime_type: str
    url: str | None = None

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "mime_type": self.mime_type}


@dataclass(frozen=True, kw_only=True)
class Message:
    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    images: tuple[ImageRef, ...] = ()

    def to_openai(self) -> dict[str, Any]:
        shown = [i.url for i in self.images if i.url]
        content: str | list[dict[str, Any]] = self.content
        if shown:
            parts: list[dict[str, Any]] = [{"type": "text", "text": self.content}] if (
                self.content) else []
            parts += [{"type": "image_url", "image_url": {"url": url}} for url in shown]
            content = parts
        out: dict[str, Any] = {"role": self.role, "content": content}
        if self.tool_calls:
            out["tool_calls"] = [call.to_openai() for call in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None and self.role == "tool":
            out["name"] = self.name
        return out

    def tool_calls_json(self) -> str | None:
        if not self.tool_calls:
            return None
        return json.dumps([call.to_openai() for call in self.tool_calls])

    def images_json(self) -> str | None:
        if not self.images:
            return None
        return json.dumps([image.to_json() for image in self.images])

    @staticmethod
    def images_from_json(raw: str | None) -> tuple[ImageRef, ...]:
        if not raw:
            return ()
        return tuple(ImageRef(id=i["id"], mime_type=i["mime_type"]) for i in json.loads(raw))

    @staticmethod
    def calls_from_json(raw: str | None) -> tuple[ToolCall, ...]:
        if not raw:
            return ()
        return tuple(
            ToolCall(id=c["id"], name=c["function"]["name"], arguments=c["function"]["arguments"])
            for c in json.loads(raw)
        )


@dataclass(frozen=True, kw_only=True)
class Usage:
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None
    calls: int = 1
    kind: str = "chat"  # chat, vision, speech or transcription

    def __add__(self, other: Usage) -> Usage:
        cost = None
        if self.cost_usd is not None or other.cost_usd is not None:
            cost = (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        return Usage(
            model=self.model,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cost_usd=cost,
            calls=self.calls + other.calls,
            kind=self.kind,
        )


@dataclass(frozen=True, kw_only=True)
class Attachment:
    kind: Literal["image", "voice", "audio", "file"]
    ref: str  # platform file id or object-store key
    mime_type: str | None = None
    name: str | None = None


@dataclass(frozen=True)
class Press:
    """A button pressed under a question the ``clarify`` tool asked: which question, which
    choice (1-based). Checked at the webhook (core.asking.clarify) before a turn sees it."""

    question_id: str
    choice: int


@dataclass(frozen=True, kw_only=True)
class CronRun:
    """A scheduled job's run, carried by the message that starts its turn."""

    job_id: str
    run_id: str
    name: str
    trigger: str  # schedule | manual
    scheduled_for: float
    target: dict[str, Any]  # where the answer goes (``core.scheduler.targets.Target``)
    notify: dict[str, Any] | None = None  # where a failure goes when the target takes no pushes
    model: str | None = None  # the job's own model, when it has one


@dataclass(frozen=True, kw_only=True)
class InboundMessage:
    """One message from any platform, normalised. ``account`` is ``<platform>:<id>``."""

    platform: Platform
    chat_id: str
    account: str
    platform_message_id: str
    text: str
    thread_id: str | None = None
    is_group: bool = False
    display_name: str | None = None
    session_hint: str | None = None
    attachments: tuple[Attachment, ...] = field(default=())
    meta: dict[str, Any] = field(default_factory=dict)  # what the platform's sender needs
    press: Press | None = None  # a press of a clarify button: the message answers a question
    stream: bool = False  # the caller reads the answer as it is written (HTTP API, dashboard)
    tapped: str | None = None  # WhatsApp: the id of the template whose quick reply was tapped
    cron: CronRun | None = None  # set on the message of a scheduled run
    # Where it was typed when the platform name says too little: "terminal" for `iris chat`
    # over the HTTP API. Sessions started by it are labelled with it.
    client: str | None = None

    @property
    def surface(self) -> str:
        """The label of the sessions this message starts: its client, else its platform."""
        return self.client or self.platform

    @property
    def chat_key(self) -> str:
        key = f"{self.platform}:{self.chat_id}"
        return f"{key}:{self.thread_id}" if self.thread_id else key
