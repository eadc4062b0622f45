"""LINE Messaging API webhooks → ``InboundMessage``: pydantic models of the few fields Iris reads
of a webhook body (``{"destination", "events": [...]}``, Messaging API reference, "Webhook
Event Objects").

A chat is the event's ``source``: a person (``userId``), a group (``groupId``) or a multi-person
room (``roomId``); groups and rooms are group chats whose data belongs to the group's own scope.
The message id is the inbox's idempotency key, so a redelivered event
(``deliveryContext.isRedelivery``, the same ``webhookEventId``) is a no-op. The event's
``replyToken`` and ``timestamp`` go into ``meta`` for the sender (a reply token is single-use and
valid for about a minute). Text is read; images and files become attachments (the sender
downloads their content by message id); a ``postback`` from one of Iris' quick-reply buttons is
the answer to its ``clarify`` question. In a group or room, with ``group_reply_mode: mention``
(the default), only text that mentions Iris (``mention.mentionees[].isSelf``) or starts with
``/`` is read. Follows, joins, unsends and the like are acknowledged
and ignored; stickers, video, audio and locations get a short answer without a turn.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from core.asking.clarify import parse_button
from core.messages import Attachment, InboundMessage, Press
from core.platforms.inbound import Parsed

MEDIA_ONLY = (
    "I can read text, images and files here, but not stickers, videos, audio or locations; "
    "please tell me in words what you need."
)
ID = r"^[A-Za-z0-9._=+/:-]{1,256}$"


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class LineSource(_Model):
    type: str = Field(max_length=16)
    user_id: str | None = Field(default=None, alias="userId", pattern=ID)
    group_id: str | None = Field(default=None, alias="groupId", pattern=ID)
    room_id: str | None = Field(default=None, alias="roomId", pattern=ID)


class LineMentionee(_Model):
    is_self: bool = Field(default=False, alias="isSelf")


class LineMention(_Model):
    mentionees: list[LineMentionee] = Field(default_factory=list, max_length=100)


class LineMessage(_Model):
    id: str = Field(pattern=ID)
    mention: LineMention | None = None
    type: str = Field(min_length=1, max_length=32)
    text: str = Field(default="", max_length=100_000)
    file_name: str | None = Field(default=None, alias="fileName", max_length=512)


class LinePostback(_Model):
    data: str = Field(default="", max_length=300)


class LineDelivery(_Model):
    is_redelivery: bool = Field(default=False, alias="isRedelivery")


class LineEvent(_Model):
    type: str = Field(min_length=1, max_length=64)
    mode: str = "active"
    timestamp: int = 0
    webhook_event_id: str | None = Field(default=None, alias="webhookEventId", pattern=ID)
    delivery_context: LineDelivery | None = Field(default=None, alias="deliveryContext")
    source: LineSource | None = None
    reply_token: str | None = Field(default=None, alias="replyToken", max_length=256)
    message: LineMessage | None = None
    postback: LinePostback | None = None


class LineWebhook(_Model):
    destination: str = Field(default="", max_length=64)
    events: list[LineEvent] = Field(default_factory=list, max_length=100)


def _chat(source: LineSource) -> tuple[str, bool] | None:
    """The chat id to push to and whether it is a group chat; None for an unknown source."""
    if source.type == "user" and source.user_id:
        return source.user_id, False
    if source.type == "group" and source.group_id:
        return source.group_id, True
    if source.type == "room" and source.room_id:
        return source.room_id, True
    return None


def _meta(event: LineEvent) -> dict[str, object]:
    meta: dict[str, object] = {"event_ms": event.timestamp}
    if event.reply_token:
        meta["reply_token"] = event.reply_token
    return meta


def _message(
    chat_id: str,
    user: str,
    group: bool,
    message_id: str,
    text: str,
    attachments: tuple[Attachment, ...],
    meta: dict[str, object],
    press: Press | None = None,
) -> InboundMessage:
    return InboundMessage(
        platform="line",
        chat_id=chat_id,
        account=f"line:{user}",
        is_group=group,
        platform_message_id=message_id,
        text=text,
        attachments=attachments,
        meta=meta,
        press=press,
    )


def _addressed(msg: LineMessage) -> bool:
    """In a group with ``group_reply_mode: mention``: Iris was mentioned, or a command sent."""
    mentioned = msg.mention is not None and any(m.is_self for m in msg.mention.mentionees)
    return mentioned or msg.text.lstrip().startswith("/")


def parse_event(event: LineEvent, group_mode: str = "mention") -> Parsed:
    if event.mode != "active":  # another channel is the module's standby: not ours to answer
        return Parsed(reason="standby mode")
    if event.source is None or event.source.user_id is None:
        return Parsed(reason="no sender")
    chat = _chat(event.source)
    if chat is None:
        return Parsed(reason=f"{event.source.type} sources are not read")
    chat_id, group = chat
    user = event.source.user_id
    group_ref = chat_id if group else None
    if event.type == "postback" and event.postback is not None:
        chosen = parse_button(event.postback.data)
        if chosen is None:
            return Parsed(reason="a postback that is not a clarify choice")
        question_id, number = chosen
        return Parsed(
            message=_message(
                chat_id, user, group, f"{user}:clarify:{question_id}", str(number), (),
                _meta(event), press=Press(question_id, number)
            ),
            group_ref=group_ref,
        )
    if event.type != "message" or event.message is None:
        return Parsed(reason=f"{event.type} events are not read")
    msg = event.message
    attachments: tuple[Attachment, ...] = ()
    reply = None
    if msg.type == "image":
        attachments = (Attachment(kind="image", ref=msg.id, mime_type="image/jpeg"),)
    elif msg.type == "file":
        attachments = (Attachment(kind="file", ref=msg.id, mime_type=None, name=msg.file_name),)
    elif msg.type != "text":
        reply = MEDIA_ONLY
    elif not msg.text.strip():
        return Parsed(reason="nothing to read")
    if group and group_mode == "mention" and not _addressed(msg):
        return Parsed(reason="a group message not addressed to Iris")
    message = _message(chat_id, user, group, msg.id, msg.text, attachments, _meta(event))
    return Parsed(message=message, reply=reply, group_ref=group_ref)


def parse_webhook(payload: LineWebhook, group_mode: str = "mention") -> list[Parsed]:
    return [parse_event(event, group_mode) for event in payload.events]
