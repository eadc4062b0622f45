"""WhatsApp Cloud API webhooks → ``InboundMessage``: pydantic models of the few fields Iris reads
of ``entry[].changes[].value`` (``messages``, ``contacts``, ``metadata``; ``statuses`` are
acknowledged and ignored).

Every WhatsApp chat with a business number is one person's: the chat is the sender's ``wa_id``
and the message id (``wamid…``) is the inbox's idempotency key, so Meta's re-sends are no-ops.
Text, button replies and captions are read (a press of a ``clarify`` button or list row is
the answer to its question; a tap on a template's quick-reply button, type ``button``, carries
the template's id in ``InboundMessage.tapped``: see ``functions.whatsapp.tap``); voice notes and
audio go through transcription, images become image attachments and documents file
attachments (the documents path saves them under ``inbox/``); the sender downloads each by its
media id. Videos and stickers without a caption get a short answer without a turn.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from core.asking.clarify import parse_button
from core.messages import Attachment, InboundMessage, Press
from core.platforms.inbound import Parsed
from core.platforms.media import kind_for

MEDIA_ONLY = (
    "I can read text, voice notes, images and documents, but not videos or stickers; please "
    "tell me in words what you need."
)
ID = r"^[A-Za-z0-9._=+/:-]{1,256}$"


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class WaText(_Model):
    body: str = Field(default="", max_length=100_000)


class WaMedia(_Model):
    id: str = Field(pattern=ID)
    mime_type: str | None = None
    caption: str | None = None
    filename: str | None = None
    voice: bool = False


class WaReply(_Model):
    id: str | None = None
    title: str = ""


class WaInteractive(_Model):
    type: str = ""
    button_reply: WaReply | None = None
    list_reply: WaReply | None = None


class WaButton(_Model):
    text: str = ""
    payload: str | None = None


class WaContext(_Model):
    """The message a reply or a tap answers (``context.id``: its wamid)."""

    id: str | None = Field(default=None, pattern=ID)


class WaMessage(_Model):
    from_: str = Field(alias="from", pattern=r"^\d{1,32}$")
    id: str = Field(pattern=ID)
    timestamp: str = ""
    type: str = Field(min_length=1, max_length=64)
    text: WaText | None = None
    audio: WaMedia | None = None
    voice: WaMedia | None = None
    image: WaMedia | None = None
    document: WaMedia | None = None
    video: WaMedia | None = None
    sticker: WaMedia | None = None
    button: WaButton | None = None
    interactive: WaInteractive | None = None
    context: WaContext | None = None


class WaProfile(_Model):
    name: str | None = None


class WaContact(_Model):
    wa_id: str | None = None
    profile: WaProfile | None = None


class WaMetadata(_Model):
    display_phone_number: str | None = None
    phone_number_id: str


class WaValue(_Model):
    messaging_product: str | None = None
    metadata: WaMetadata | None = None
    contacts: list[WaContact] = Field(default_factory=list)
    messages: list[WaMessage] = Field(default_factory=list, max_length=100)
    statuses: list[dict[str, object]] = Field(default_factory=list)


class WaChange(_Model):
    field: str
    value: WaValue


class WaEntry(_Model):
    id: str | None = None
    changes: list[WaChange] = Field(default_factory=list, max_length=100)


class WaPayload(_Model):
    object: str
    entry: list[WaEntry] = Field(default_factory=list, max_length=100)


def _text(msg: WaMessage) -> str:
    if msg.text is not None:
        return msg.text.body
    if msg.button is not None:
        return msg.button.text
    if msg.interactive is not None:
        reply = msg.interactive.button_reply or msg.interactive.list_reply
        return reply.title if reply else ""
    media = msg.image or msg.document or msg.video
    return (media.caption or "") if media else ""


def _voice(msg: WaMessage) -> tuple[Attachment, ...]:
    audio = msg.audio or msg.voice
    if audio is None:
        return ()
    mime = (audio.mime_type or "audio/ogg").split(";", 1)[0].strip()
    if audio.voice or msg.voice is not None:
        return (Attachment(kind="voice", ref=audio.id, mime_type=mime),)
    return (Attachment(kind="audio", ref=audio.id, mime_type=mime),)


def _files(msg: WaMessage) -> tuple[Attachment, ...]:
    """An image, or a document (an image sent as a document is an image too)."""
    if msg.image is not None:
        mime = msg.image.mime_type or "image/jpeg"
        return (Attachment(kind=kind_for(mime), ref=msg.image.id, mime_type=mime,
                           name=msg.image.filename),)
    if msg.document is not None:
        doc = msg.document
        return (Attachment(kind=kind_for(doc.mime_type), ref=doc.id, mime_type=doc.mime_type,
                           name=doc.filename),)
    return ()


def parse_press(msg: WaMessage, names: dict[str, str]) -> Parsed | None:
    """A press of one of Iris' ``clarify`` buttons or list rows (a message of type
    ``interactive``) as the message it answers with, checked against its question at the
    webhook (``core.asking.clarify.pressable``); None when the message is anything else. The message
    id is ``<wa_id>:clarify:<question>``, so pressing twice records one answer."""
    if msg.type != "interactive" or msg.interactive is None:
        return None
    reply = msg.interactive.button_reply or msg.interactive.list_reply
    chosen = parse_button(reply.id or "") if reply is not None else None
    if chosen is None:
        return None
    question_id, number = chosen
    wa_id = msg.from_
    message = InboundMessage(
        platform="whatsapp", chat_id=wa_id, account=f"whatsapp:{wa_id}",
        platform_message_id=f"{wa_id}:clarify:{question_id}", text=str(number),
        display_name=names.get(wa_id),
        meta={"message_id": msg.id}, press=Press(question_id, number),
    )
    return Parsed(message=message)


def parse_message(msg: WaMessage, names: dict[str, str]) -> Parsed:
    pressed = parse_press(msg, names)
    if pressed is not None:
        return pressed
    if msg.type in ("reaction", "unsupported", "system", "request_welcome", "order"):
        return Parsed(reason=f"{msg.type} messages are not read")
    attachments = _voice(msg) + _files(msg)
    text = _text(msg)
    reply = None
    if not text.strip() and not attachments:
        if not any((msg.video, msg.sticker)):
            return Parsed(reason="nothing to read")
        reply = MEDIA_ONLY
    wa_id = msg.from_
    tapped = None
    if msg.type == "button" and msg.context is not None and msg.context.id:
        tapped = msg.context.id  # a quick-reply button of this template was tapped
    message = InboundMessage(
        platform="whatsapp", chat_id=wa_id, account=f"whatsapp:{wa_id}",
        platform_message_id=msg.id, text=text, display_name=names.get(wa_id),
        attachments=attachments, meta={"message_id": msg.id}, tapped=tapped,
    )
    return Parsed(message=message, reply=reply)


def parse_payload(payload: WaPayload, phone_number_id: str) -> list[Parsed]:
    """Each message of the payload for Iris' own number, in order; other numbers of the same
    business account and status callbacks are skipped."""
    found: list[Parsed] = []
    for entry in payload.entry:
        for change in entry.changes:
            value = change.value
            if change.field != "messages" or value.metadata is None:
                continue
            if value.metadata.phone_number_id != phone_number_id:
                continue
            names = {c.wa_id: c.profile.name for c in value.contacts
                     if c.wa_id and c.profile and c.profile.name}
            found.extend(parse_message(msg, names) for msg in value.messages)
    return found
