"""Where a job's results go: the chat it was created in, a named chat, or nowhere (history only).

``deliver`` accepts ``origin`` (the default), ``none``/``local`` (keep results in the job's
history only), ``inbox`` (the user's Iris inbox: ``iris chat`` shows it, ``GET /v1/notifications``
returns it, a registered webhook receives it; where jobs made over HTTP or in the terminal
deliver), a platform Iris can push to (``telegram``, ``slack``…: your most recent chat
there), a chat in that platform's form (``telegram:<chat_id>[:<topic>]``,
``slack:[<team>:]<channel>[:<thread_ts>]``…; see each ``PlatformSpec``), or ``team:NAME`` (the
group chat bound to a team the user is a member of, docs/teams.md). A chat must be one the
user talks to Iris in, unless the one asking is the owner or the operator (CLI).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from core.errors import IrisUsageError
from core.platforms import inbox
from core.platforms.registry import PLATFORMS

if TYPE_CHECKING:
    from core.messages import InboundMessage
    from core.platforms.spec import ChatAddress
    from core.store import Store

NOWHERE = ("none", "local")
SCAN_LIMIT = 500


def deliver_help() -> str:
    names = PLATFORMS.push_names()
    forms = " or ".join(f'"{PLATFORMS[n].chat_help}"' for n in names)
    return (f'use "origin" (this chat), "none" (keep results in the job\'s history only), '
            f'"inbox" (your Iris inbox: iris chat, the HTTP API, your webhook), '
            f'{" or ".join(repr(n) for n in names)} (your latest chat there), '
            f'"team:NAME" (your team\'s bound group chat), or a chat such as {forms}')


@dataclass(frozen=True)
class Target:
    platform: str  # telegram | slack | http | cli | none
    chat_key: str | None = None
    address: dict[str, Any] = field(default_factory=dict)  # what the platform's sender needs
    label: str = "nowhere"

    @property
    def deliverable(self) -> bool:
        return self.platform == inbox.PLATFORM or PLATFORMS[self.platform].push

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
INBOX = Target(platform=inbox.PLATFORM,
               label="your Iris inbox (iris chat shows it; GET /v1/notifications)")


def _target(platform: str, chat: ChatAddress) -> Target:
    return Target(platform, chat.chat_key, chat.address, chat.label)


def target_of(message: InboundMessage) -> Target:
    """The chat a message came from, as a delivery target (no quoting, no one-off reply URLs)."""
    if message.cron is not None:  # a scheduled run: where its job delivers
        return Target.from_dict(message.cron.target)
    spec = PLATFORMS[message.platform]
    if spec.push and spec.chat_address is not None:
        return _target(spec.name, spec.chat_address(message))
    if spec.inbox:
        return INBOX
    return Target(message.platform, message.chat_key, {},
                  f"{message.chat_key} (no push: results stay in the job's history)")


def origin_of(store: Store, user_id: str, *, inbox_id: int | None = None,
              chat_key: str | None = None) -> Target:
    """The chat a request came from: its inbox entry, else the chat's latest message."""
    if inbox_id is not None:
        return target_of(store.inbox.get(user_id, inbox_id).message)
    if chat_key:
        latest = store.inbox.latest_messages(user_id, chat_key=chat_key, limit=1)
        if latest:
            return target_of(latest[0])
    return NO_TARGET


def latest_chat(store: Store, user_id: str, platforms: tuple[str, ...] | None = None,
                *, private_first: bool = True) -> Target | None:
    """The user's most recent chat on one of ``platforms`` (default: every platform Iris can
    push to), a private one when there is any."""
    platforms = platforms or PLATFORMS.push_names()
    messages = store.inbox.latest_messages(user_id, platforms=platforms, limit=SCAN_LIMIT)
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
    if word == inbox.PLATFORM:
        return INBOX
    if word.startswith("team:"):
        return team_chat(store, user_id, text.split(":", 1)[1].strip())
    pushable = PLATFORMS.push_names()
    if word in pushable:
        found = latest_chat(store, user_id, (word,))
        if found is None:
            raise IrisUsageError(f"you have no {word} chat with Iris yet; message Iris there "
                                 f"first, or {deliver_help()}")
        return found
    platform, _, rest = text.partition(":")
    spec = PLATFORMS[platform.lower()]
    if spec.name not in pushable or spec.parse_chat is None or not rest.strip():
        raise IrisUsageError(f"unknown delivery target {text!r}; {deliver_help()}")
    wanted = _target(spec.name, spec.parse_chat(rest.strip()))
    known = _known_chat(store, user_id, wanted)
    if known is not None:
        return known
    if not privileged:
        hint = deliver_help()
        raise IrisUsageError(
            f"{wanted.label} is not a chat you talk to Iris in; only the owner can send jobs to "
            f"other chats. {hint[0].upper()}{hint[1:]}"
        )
    return wanted


def team_chat(store: Store, user_id: str, name: str) -> Target:
    """The group chat bound to team ``name`` (``/team bind``) that Iris heard from last, for a
    member of that team; IrisUsageError (a non-member learns nothing) otherwise."""
    team = store.teams.find(user_id, name)
    for binding in reversed(store.team_bindings.of_team(user_id, team.id)):
        if not binding.place.startswith("grp_"):  # a Slack workspace is not one chat
            continue
        latest = store.inbox.latest_messages(binding.place, limit=1)
        if latest:
            found = target_of(latest[0])
            if found.deliverable:
                return replace(found, label=f"team {team.name}'s chat ({found.label})")
    raise IrisUsageError(f"team {team.name} has no bound group chat Iris can write to; an admin "
                         f"sends /team bind {team.name} in the group first")


def _known_chat(store: Store, user_id: str, wanted: Target) -> Target | None:
    """The user's own chat matching ``wanted``, with its full address; None if they have none."""
    for message in store.inbox.latest_messages(
        user_id, platforms=(wanted.platform,), limit=SCAN_LIMIT
    ):
        found = target_of(message)
        same = PLATFORMS[wanted.platform].same_chat
        if same is not None and same(found.address, wanted.address):
            return found
    return None
