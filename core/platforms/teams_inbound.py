"""Microsoft Teams activities (Bot Framework) → ``InboundMessage``.

The Bot Connector POSTs an Activity to the bot's messaging endpoint. A ``message`` activity is a
message: in a personal chat the chat is the person's; in a group chat or a channel (where the
bot only hears messages that @mention it) the conversation's group scope owns the data and the
member is named in the text. ``<at>…</at>`` mentions are taken out of the text. A message
activity whose ``value`` carries Iris' button data is the press of an Adaptive Card
``Action.Submit`` button (``core.platforms.teams_buttons``). The activity id is the inbox's
idempotency key; ``serviceUrl`` (checked against the token's claim at the webhook) and the
conversation are kept in ``meta`` so the answer is posted as a reply there.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from core.messages import InboundMessage
from core.platforms.inbound import Parsed

MESSAGE = "message"
MENTION = re.compile(r"<at>[^<]{0,200}</at>", re.I)


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class ChannelAccount(_Model):
    id: str = Field(min_length=1, max_length=512)
    name: str | None = Field(default=None, max_length=512)
    aad_object_id: str | None = Field(default=None, alias="aadObjectId", max_length=64)
    role: str | None = None


class Conversation(_Model):
    id: str = Field(min_length=1, max_length=1024)
    conversation_type: str | None = Field(default=None, alias="conversationType")
    is_group: bool | None = Field(default=None, alias="isGroup")
    tenant_id: str | None = Field(default=None, alias="tenantId", max_length=64)
    name: str | None = None


class Activity(_Model):
    type: str = Field(max_length=64)
    id: str | None = Field(default=None, max_length=256)
    service_url: str = Field(alias="serviceUrl", max_length=2048,
                             pattern=r"^https?://[^\s/?#]+(/[^\s?#]*)?$")
    channel_id: str = Field(alias="channelId", max_length=64)
    from_: ChannelAccount | None = Field(default=None, alias="from")
    conversation: Conversation | None = None
    recipient: ChannelAccount | None = None
    text: str | None = None
    value: Any = None
    reply_to_id: str | None = Field(default=None, alias="replyToId", max_length=256)


def is_group(conversation: Conversation) -> bool:
    kind = conversation.conversation_type
    return bool(conversation.is_group) or kind in ("groupChat", "channel")


def clean_text(text: str) -> str:
    """The text without the bot's (and anyone's) ``<at>name</at>`` mention tags."""
    return MENTION.sub("", text).replace("&nbsp;", " ").strip()


def reply_meta(activity: Activity) -> dict[str, Any]:
    assert activity.conversation is not None
    meta: dict[str, Any] = {"service_url": activity.service_url,
                            "conversation_id": activity.conversation.id}
    if activity.id:
        meta["reply_to_id"] = activity.id
    return meta


def person(activity: Activity) -> ChannelAccount | None:
    who = activity.from_
    if who is None or activity.conversation is None or who.role == "bot":
        return None
    if activity.recipient is not None and who.id == activity.recipient.id:
        return None
    return who


def parse_activity(activity: Activity) -> Parsed:
    if activity.type != MESSAGE:
        return Parsed(reason=f"activity type {activity.type!r} is not a message")
    who = person(activity)
    if who is None or activity.id is None:
        return Parsed(reason="not a message from a person in a conversation")
    assert activity.conversation is not None
    text = clean_text(activity.text or "")
    if not text:
        return Parsed(reason="empty message")
    name = who.name or who.id
    group = is_group(activity.conversation)
    if group and not text.startswith("/"):
        text = f"[{name}] {text}"
    conversation = activity.conversation.id
    message = InboundMessage(
        platform="teams", chat_id=conversation, account=f"teams:{who.id}",
        platform_message_id=f"activity:{activity.id}", text=text, is_group=group,
        display_name=name, meta=reply_meta(activity),
    )
    return Parsed(message=message, group_ref=conversation if group else None,
                  group_title=activity.conversation.name)
