"""Where a job's results go: the chat it was created in, a named chat, or nowhere (history only).

``deliver`` accepts ``origin`` (the default), ``none``/``local`` (keep results in the job's
history only), a platform (``telegram``, ``slack``: your most recent chat there) or a chat
(``telegram:<chat_id>[:<topic>]``, ``slack:[<team>:]<channel>[:<thread_ts>]``). A chat must be one
the user talks to Iris in, unless the one asking is the owner or the operator (CLI).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.errors import IrisUsageError
from core.store.inbox import decode_inbound

if TYPE_CHECKING:
    from core.messages import InboundMessage
    from core.store import Store

PUSH_PLATFORMS = ("telegram", "slack")
NOWHERE = ("none", "local")
SCAN_LIMIT = 500
DELIVER_HELP = (
    'use "origin" (this chat), "none" (keep results in the job\'s history only), "telegram" or '
    '"slack" (your latest chat there), or a chat such as "telegram:123456789" or "slack:C0123ABC"'
)
_SLACK_TS = re.compile(r"\d+\.\d+")


@dataclass(frozen=True)
class Target:
    platform: str  # telegram | slack | http | cli | none
    chat_key: str | None = None
    address: dict[str, Any] = field(default_factory=dict)  # what the platform's sender needs
    label: str = "nowhere"

    @property
    def deliverable(self) -> bool:
        return self.platform in PUSH_PLATFORMS

    def to_dict(self) -> dict[str, Any]:
        return {"platform": self.platform, "chat_key": self.chat_key, "address": self.address,
                "label": self.label}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Target:
        if not data:
            return NO_TARGET
        return cls(platform=str(data.get("platform") or "none"), chat_key=data.get("chat_key"),
                   address=dict(data.get("address") or {}), label=str(data.get("label") or ""))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_json(cls, raw: str) -> Target:
        return cls.from_dict(json.loads(raw))


NO_TARGET = Target(platform="none", label="nowhere (results stay in the job's history)")


def target_of(message: InboundMessage) -> Target:
    """The chat a message came from, as a delivery target (no quoting, no one-off reply URLs)."""
    if message.platform == "cron":
        return Target.from_dict((message.meta.get("cron") or {}).get("target"))
    if message.platform == "telegram":
        address = {"chat_id": message.chat_id, "thread_id": message.thread_id}
        topic = f":{message.thread_id}" if message.thread_id else ""
        label = f"telegram:{message.chat_id}{topic}"
        return Target("telegram", message.chat_key, address, label)
    if message.platform == "slack":
        channel = message.meta.get("channel") or message.chat_id.rsplit(":", 1)[-1]
        thread = message.meta.get("thread_ts") or message.thread_id
        address = {"chat_id": message.chat_id, "thread_id": message.thread_id,
                   "channel": channel, "thread_ts": thread}
        label = f"slack:{channel}" + (f":{thread}" if thread else "")
        return Target("slack", message.chat_key, address, label)
    return Target(message.platform, message.chat_key, {},
                  f"{message.chat_key} (no push: results stay in the job's history)")


def origin_of(store: Store, user_id: str, *, inbox_id: int | None = None,
              chat_key: str | None = None) -> Target:
    """The chat a request came from: its inbox entry, else the chat's latest message."""
    if inbox_id is not None:
        return target_of(store.inbox.get(user_id, inbox_id).message)
    if chat_key:
        row = store.db.one(
            "SELECT payload FROM inbox WHERE user_id = ? AND chat_key = ? ORDER BY id DESC LIMIT 1",
            (user_id, chat_key),
        )
        if row:
            return target_of(decode_inbound(row["payload"]))
    return NO_TARGET


def latest_chat(store: Store, user_id: str, platforms: tuple[str, ...] = PUSH_PLATFORMS,
                *, private_first: bool = True) -> Target | None:
    """The user's most recent chat on one of ``platforms`` (a private one when there is any)."""
    marks = ",".join("?" for _ in platforms)
    rows = store.db.query(
        f"SELECT payload FROM inbox WHERE user_id = ? AND platform IN ({marks})"
        " ORDER BY id DESC LIMIT ?",
        (user_id, *platforms, SCAN_LIMIT),
    )
    messages = [decode_inbound(row["payload"]) for row in rows]
    if private_first:
        messages.sort(key=lambda m: m.is_group)  # stable: latest private chat first
    return target_of(messages[0]) if messages else None


def resolve_deliver(store: Store, user_id: str, deliver: str | None, *, origin: Target,
                    privileged: bool = False) -> Target:
    """The target ``deliver`` names for this user; IrisUsageError with what works otherwise."""
    text = (deliver or "origin").strip()
    word = text.lower()
    if word in ("origin", "here", "this chat", ""):
        return origin
    if word in NOWHERE:
        return NO_TARGET
    if word in PUSH_PLATFORMS:
        found = latest_chat(store, user_id, (word,))
        if found is None:
            raise IrisUsageError(f"you have no {word} chat with Iris yet; message Iris there "
                                 f"first, or {DELIVER_HELP}")
        return found
    platform, _, rest = text.partition(":")
    platform = platform.lower()
    if platform not in PUSH_PLATFORMS or not rest.strip():
        raise IrisUsageError(f"unknown delivery target {text!r}; {DELIVER_HELP}")
    wanted = _explicit(platform, rest.strip())
    known = _known_chat(store, user_id, wanted)
    if known is not None:
        return known
    if not privileged:
        raise IrisUsageError(
            f"{wanted.label} is not a chat you talk to Iris in; only the owner can send jobs to "
            f"other chats. {DELIVER_HELP[0].upper()}{DELIVER_HELP[1:]}"
        )
    return wanted


def _explicit(platform: str, rest: str) -> Target:
    parts = [p for p in rest.split(":") if p]
    if platform == "telegram":
        if not parts or len(parts) > 2 or not re.fullmatch(r"-?\d+", parts[0]) or (
            len(parts) == 2 and not parts[1].isdigit()
        ):
            raise IrisUsageError(
                f"not a Telegram chat: telegram:{rest} (expected telegram:<chat id>[:<topic id>],"
                " e.g. telegram:123456789)"
            )
        chat_id, thread = parts[0], (parts[1] if len(parts) == 2 else None)
        chat_key = f"telegram:{chat_id}" + (f":{thread}" if thread else "")
        return Target("telegram", chat_key, {"chat_id": chat_id, "thread_id": thread},
                      f"telegram:{chat_id}" + (f":{thread}" if thread else ""))
    thread = parts.pop() if parts and _SLACK_TS.fullmatch(parts[-1]) else None
    if not 1 <= len(parts) <= 2 or not all(re.fullmatch(r"[A-Za-z0-9_-]+", p) for p in parts):
        raise IrisUsageError(
            f"not a Slack channel: slack:{rest} (expected slack:[<team>:]<channel>[:<thread_ts>],"
            " e.g. slack:C0123ABC)"
        )
    channel = parts[-1]
    chat_id = ":".join(parts)
    chat_key = f"slack:{chat_id}" + (f":{thread}" if thread else "")
    address = {"chat_id": chat_id, "thread_id": thread, "channel": channel, "thread_ts": thread}
    return Target("slack", chat_key, address, f"slack:{channel}" + (f":{thread}" if thread else ""))


def _known_chat(store: Store, user_id: str, wanted: Target) -> Target | None:
    """The user's own chat matching ``wanted``, with its full address; None if they have none."""
    rows = store.db.query(
        "SELECT payload FROM inbox WHERE user_id = ? AND platform = ? ORDER BY id DESC LIMIT ?",
        (user_id, wanted.platform, SCAN_LIMIT),
    )
    for row in rows:
        found = target_of(decode_inbound(row["payload"]))
        if _same_chat(found, wanted):
            return found
    return None


def _same_chat(found: Target, wanted: Target) -> bool:
    a, b = found.address, wanted.address
    if found.platform == "telegram":
        return str(a.get("chat_id")) == str(b.get("chat_id")) and a.get("thread_id") == b.get(
            "thread_id"
        )
    same_channel = a.get("channel") == b.get("channel")
    team_ok = ":" not in str(b.get("chat_id")) or a.get("chat_id") == b.get("chat_id")
    return same_channel and team_ok and a.get("thread_ts") == b.get("thread_ts")
