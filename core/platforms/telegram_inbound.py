"""Telegram updates → ``InboundMessage``, with pydantic models of the few Update fields Iris
reads. (python-telegram-bot's ``Update.de_json`` would cost its ~0.3 s import on every cold
webhook container; ``bench/webhook_ack.py`` prints the figure.)

In private chats every message is for Iris. In groups Iris answers when it is mentioned, replied
to, or sent a command (``group_reply_mode: mention``), or to everything (``all``); a group's data
belongs to the group, and the sender is recorded for attribution.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from core.asking.clarify import parse_button
from core.intake.images import is_image_attachment
from core.messages import Attachment, InboundMessage, Press
from core.platforms.inbound import Parsed

GROUP_TYPES = frozenset({"group", "supergroup"})
MEDIA_ONLY = (
    "I can read text and voice messages, photos, and documents (PDF, text, Markdown, CSV, "
    "JSON), but not stickers or videos; please tell me in words what you need."
)


class _Model(BaseModel):
    # strict: the Bot API sends JSON numbers; "+0" or "7" for an id is not an update of theirs
    model_config = ConfigDict(extra="ignore", populate_by_name=True, strict=True)


class TgUser(_Model):
    id: int
    is_bot: bool = False
    first_name: str = ""
    last_name: str | None = None
    username: str | None = None


class TgChat(_Model):
    id: int
    type: str
    title: str | None = None


class TgEntity(_Model):
    type: str
    offset: int = Field(ge=0)
    length: int = Field(ge=0)
    user: TgUser | None = None


class TgFile(_Model):
    file_id: str = Field(min_length=1, max_length=1024)
    mime_type: str | None = None
    file_name: str | None = None
    file_size: int | None = None
    duration: int | None = None


class TgMessage(_Model):
    message_id: int
    from_user: TgUser | None = Field(default=None, alias="from")
    chat: TgChat
    date: int = 0
    message_thread_id: int | None = None
    is_topic_message: bool = False
    text: str | None = None
    caption: str | None = None
    entities: list[TgEntity] = Field(default_factory=list)
    caption_entities: list[TgEntity] = Field(default_factory=list)
    voice: TgFile | None = None
    audio: TgFile | None = None
    photo: list[dict[str, object]] | None = None
    document: TgFile | None = None
    sticker: dict[str, object] | None = None
    video: dict[str, object] | None = None
    video_note: dict[str, object] | None = None
    reply_to_message: TgMessage | None = None


class TgCallbackQuery(_Model):
    """A press of an inline keyboard button (``clarify`` choices)."""

    id: str = Field(min_length=1, max_length=1024)
    from_user: TgUser = Field(alias="from")
    message: TgMessage | None = None
    data: str | None = None  # any button's; ``core.asking.clarify.parse_button`` picks Iris' own


class TgUpdate(_Model):
    """The update types Iris handles: each field but ``update_id`` is one, and
    ``UPDATE_TYPES`` (what the webhook registration asks Telegram for) is read from here."""

    update_id: int
    message: TgMessage | None = None
    callback_query: TgCallbackQuery | None = None


UPDATE_TYPES: tuple[str, ...] = tuple(name for name in TgUpdate.model_fields
                                      if name != "update_id")
# What Telegram sends when a webhook names no ``allowed_updates`` (Bot API, setWebhook): every
# type but these.
NOT_SENT_BY_DEFAULT = frozenset({"chat_member", "message_reaction", "message_reaction_count"})


def missing_updates(allowed: list[str] | tuple[str, ...] | None) -> list[str]:
    """The update types Iris handles that a webhook registered with ``allowed`` never gets
    (``getWebhookInfo`` reports no list when the default is in force)."""
    if not allowed:
        return [kind for kind in UPDATE_TYPES if kind in NOT_SENT_BY_DEFAULT]
    return [kind for kind in UPDATE_TYPES if kind not in allowed]


@dataclass(frozen=True)
class BotIdentity:
    id: int | None
    username: str | None = None


def bot_id_from_token(token: str) -> int | None:
    """A bot's user id is the part of its token before the colon."""
    head = token.split(":", 1)[0]
    return int(head) if head.isdigit() else None


def utf16_slice(text: str, offset: int, length: int) -> str:
    """Telegram's entity offsets count UTF-16 code units."""
    raw = text.encode("utf-16-le")
    return raw[offset * 2:(offset + length) * 2].decode("utf-16-le", errors="ignore")


def needs_username(update: TgUpdate) -> bool:
    """Whether deciding if a group message is for Iris needs the bot's @username."""
    msg = update.message
    if msg is None or msg.chat.type not in GROUP_TYPES:
        return False
    return any(e.type in ("mention", "bot_command") for e in msg.entities + msg.caption_entities)


def _addressed(msg: TgMessage, text: str, entities: list[TgEntity], bot: BotIdentity) -> bool:
    reply = msg.reply_to_message
    if reply and reply.from_user and bot.id is not None and reply.from_user.id == bot.id:
        return True
    name = (bot.username or "").lower()
    for entity in entities:
        piece = utf16_slice(text, entity.offset, entity.length)
        if entity.type == "text_mention" and entity.user and entity.user.id == bot.id:
            return True
        if entity.type == "mention" and name and piece.lower() == f"@{name}":
            return True
        if entity.type == "bot_command" and entity.offset == 0:
            _, at, target = piece.partition("@")
            return not at or (bool(name) and target.lower() == name)
    return False


def _without_mention(text: str, bot: BotIdentity) -> str:
    if not bot.username:
        return text.strip()
    cleaned = re.sub(rf"(?<!\w)@{re.escape(bot.username)}\b", "", text, flags=re.IGNORECASE)
    return re.sub(r"[ \t]{2,}", " ", cleaned).strip()


def _voice(msg: TgMessage) -> tuple[Attachment, ...]:
    if msg.voice is not None:
        return (Attachment(kind="voice", ref=msg.voice.file_id,
                           mime_type=msg.voice.mime_type or "audio/ogg"),)
    if msg.audio is not None:
        return (Attachment(kind="audio", ref=msg.audio.file_id, mime_type=msg.audio.mime_type,
                           name=msg.audio.file_name),)
    return ()


def _document(msg: TgMessage) -> tuple[Attachment, ...]:
    """A document (PDF, text, an image sent as a file...); what Iris reads is decided when the
    turn takes it."""
    if msg.document is None:
        return ()
    doc = msg.document
    image = is_image_attachment(doc.mime_type, doc.file_name)
    return (Attachment(kind="image" if image else "file", ref=doc.file_id,
                       mime_type=doc.mime_type, name=doc.file_name),)


def _photo(msg: TgMessage) -> tuple[Attachment, ...]:
    """A photo comes in several sizes (PhotoSize, smallest first): the largest is taken."""
    sizes = [p for p in msg.photo or () if isinstance(p.get("file_id"), str)]
    if not sizes:
        return ()
    largest = max(sizes, key=lambda p: _area(p))
    return (Attachment(kind="image", ref=str(largest["file_id"]), mime_type="image/jpeg"),)


def _area(size: dict[str, object]) -> int:
    width, height = size.get("width"), size.get("height")
    return width * height if isinstance(width, int) and isinstance(height, int) else 0


def parse_press(press: TgCallbackQuery) -> Parsed:
    """A button press as the message it answers with: the chosen choice, checked against the
    question it belongs to at the webhook (``core.asking.clarify.pressable``)."""
    msg, sender = press.message, press.from_user
    chosen = parse_button(press.data or "")
    if chosen is None or msg is None or sender.is_bot:
        return Parsed(reason="not a button of Iris'")
    is_group = msg.chat.type in GROUP_TYPES
    if msg.chat.type != "private" and not is_group:
        return Parsed(reason=f"{msg.chat.type} chats are not supported")
    question_id, number = chosen
    name = " ".join(p for p in (sender.first_name, sender.last_name) if p) or sender.username
    thread = str(msg.message_thread_id) if msg.is_topic_message and msg.message_thread_id else None
    chat_id = str(msg.chat.id)
    message = InboundMessage(
        platform="telegram", chat_id=chat_id, account=f"telegram:{sender.id}",
        platform_message_id=f"{chat_id}:clarify:{question_id}", text=f"{number}",
        thread_id=thread, is_group=is_group, display_name=name,
        meta={"message_id": msg.message_id, "quote": False, "callback_id": press.id},
        press=Press(question_id, number),
    )
    return Parsed(message=message, group_ref=chat_id if is_group else None,
                  group_title=msg.chat.title if is_group else None)


def parse_update(update: TgUpdate, bot: BotIdentity, *, group_mode: str = "mention") -> Parsed:
    if update.callback_query is not None:
        return parse_press(update.callback_query)
    msg = update.message
    if msg is None:
        return Parsed(reason="not a new message")
    sender = msg.from_user
    if sender is None or sender.is_bot:
        return Parsed(reason="not from a person")
    is_group = msg.chat.type in GROUP_TYPES
    if msg.chat.type != "private" and not is_group:
        return Parsed(reason=f"{msg.chat.type} chats are not supported")
    text = msg.text if msg.text is not None else (msg.caption or "")
    entities = msg.entities if msg.text is not None else msg.caption_entities
    if is_group and group_mode != "all" and not _addressed(msg, text, entities, bot):
        return Parsed(reason="group message not addressed to Iris")
    attachments = _voice(msg) + _document(msg) + _photo(msg)
    text = _without_mention(text, bot) if is_group else text
    reply = None
    if not text.strip() and not attachments:
        has_media = any((msg.sticker, msg.video, msg.video_note))
        if not has_media or is_group:
            return Parsed(reason="nothing to read")
        reply = MEDIA_ONLY
    name = " ".join(p for p in (sender.first_name, sender.last_name) if p) or sender.username
    if is_group and text.strip() and not text.lstrip().startswith("/"):
        text = f"[{name or sender.id}] {text}"
    thread = str(msg.message_thread_id) if msg.is_topic_message and msg.message_thread_id else None
    chat_id = str(msg.chat.id)
    message = InboundMessage(
        platform="telegram", chat_id=chat_id, account=f"telegram:{sender.id}",
        platform_message_id=f"{chat_id}:{msg.message_id}", text=text, thread_id=thread,
        is_group=is_group, display_name=name, attachments=attachments,
        meta={"message_id": msg.message_id, "quote": is_group},
    )
    return Parsed(
        message=message, reply=reply, group_ref=chat_id if is_group else None,
        group_title=msg.chat.title if is_group else None,
    )
