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

import mimetypes
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from core.messages import Attachment, InboundMessage
from core.platforms.inbound import Parsed
from core.platforms.media import MAX_ATTACHMENTS, kind_for

MESSAGE = "message"
FILE_INFO = "application/vnd.microsoft.teams.file.download.info"
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


class TeamsAttachment(_Model):
    content_type: str = Field(alias="contentType", max_length=255)
    content_url: str | None = Field(default=None, alias="contentUrl", max_length=4096)
    name: str | None = Field(default=None, max_length=512)
    content: Any = None


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
    attachments: list[TeamsAttachment] = Field(default_factory=list, max_length=100)


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


def files(activity: Activity) -> tuple[Attachment, ...]:
    """Files (``file.download.info``: a pre-authenticated ``downloadUrl``) and pictures pasted
    in the message (``image/*``: a ``contentUrl`` at the connector, read with the bot's token).
    The ref says which: ``file:<url>`` or ``connector:<url>``."""
    found: list[Attachment] = []
    for item in activity.attachments:
        content = item.content if isinstance(item.content, dict) else {}
        if item.content_type == FILE_INFO and isinstance(content.get("downloadUrl"), str):
            mime = mimetypes.guess_type(item.name or "")[0]
            found.append(Attachment(kind=kind_for(mime), ref=f"file:{content['downloadUrl']}",
                                    mime_type=mime, name=item.name))
        elif item.content_type.startswith("image/") and item.content_url:
            found.append(Attachment(kind="image", ref=f"connector:{item.content_url}",
                                    mime_type=item.content_type, name=item.name))
    return tuple(found[:MAX_ATTACHMENTS])


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
    attachments = files(activity)
    if not text and not attachments:
        return Parsed(reason="empty message")
    name = who.name or who.id
    group = is_group(activity.conversation)
    if group and not text.startswith("/"):
        text = f"[{name}] {text}"
    conversation = activity.conversation.id
    message = InboundMessage(
        platform="teams", chat_id=conversation, account=f"teams:{who.id}",
        platform_message_id=f"activity:{activity.id}", text=text, is_group=group,
        display_name=name, attachments=attachments, meta=reply_meta(activity),
    )
    return Parsed(message=message, group_ref=conversation if group else None,
                  group_title=activity.conversation.name)
