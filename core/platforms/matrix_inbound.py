"""Matrix room events → ``InboundMessage``: pydantic models of the few fields Iris reads of an
application service transaction (Application Service API "Pushing events") and of an
``m.room.message`` content (client-server API "m.room.message msgtypes").

- ``m.text`` is read; ``m.notice`` (what bots send) and Iris' own events are not.
- ``m.image``, ``m.file`` and ``m.audio`` (voice messages, transcribed as on the other
  platforms) become attachments: the content's ``url`` is an
  ``mxc://{serverName}/{mediaId}`` URI that Iris' sender downloads from its own homeserver
  (``core.platforms.matrix.MatrixSender.download``). Since spec v1.10, when ``filename`` is
  present and differs from ``body``, ``body`` is the caption (the message's text); otherwise
  ``body`` is the file's name and there is no caption.
- An encrypted file (``file`` instead of ``url``), media kept on another server than Iris'
  own homeserver, a file whose declared ``info.size`` is over the cap, and video, locations and
  stickers get a short answer without a turn; nothing is recorded.
- End-to-end encrypted rooms: Iris holds no Megolm session keys, so an ``m.room.encrypted``
  event is unreadable. In a direct room each one gets a short answer (sent unencrypted, once
  per event) saying how to reach Iris instead; in a group room they are not answered one by
  one (Iris cannot tell whether it was addressed): the room is told once, when Iris joins an
  encrypted room (``functions.matrix``) or when someone turns encryption on
  (``m.room.encryption``). Nothing is recorded.
- In a group room (more than two members) only messages addressed to Iris are read: its user
  id in ``m.mentions.user_ids`` or in the body or formatted body (a pill links
  ``https://matrix.to/#/@iris:…``), one of its names as a word of the body, or a command
  (text starting with ``/``), as the legacy push rules ``.m.rule.contains_user_name`` and
  ``.m.rule.contains_display_name`` still match.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.messages import Attachment, InboundMessage
from core.platforms.inbound import Parsed
from core.platforms.media import MAX_MEDIA_BYTES, MB, kind_for

ID = r"^[!$@#A-Za-z0-9._=/+:-]{1,255}$"
MXC = re.compile(
    r"^mxc://(?P<server>[A-Za-z0-9.-]{1,230}(?::[0-9]{1,5})?|\[[0-9A-Fa-f:.]{2,45}\](?::[0-9]{1,5})?)"
    r"/(?P<media>[A-Za-z0-9_-]{1,255})$"
)
MEDIA = ("m.image", "m.file", "m.audio")
ENCRYPTED = (
    "I can't read files sent end-to-end encrypted; please send it in a room without "
    "encryption, or paste the text."
)
ENCRYPTED_ROOM = (
    "This room is end-to-end encrypted, and I can't read encrypted messages. To talk to me, "
    "start a room with encryption turned off and invite me (in Element: New room, then turn "
    "off \"Enable end-to-end encryption\"). Encryption can't be turned off in this room."
)
OTHER_KINDS = (
    "I can read text, images, files and voice messages here, but not video, locations or "
    "stickers; "
    "please tell me in words what you need."
)


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class MxEvent(_Model):
    type: str = Field(max_length=255)
    event_id: str | None = Field(default=None, pattern=ID)
    room_id: str | None = Field(default=None, pattern=ID)
    sender: str | None = Field(default=None, pattern=ID)
    state_key: str | None = None
    content: dict[str, Any] = Field(default_factory=dict)


class MxTransaction(_Model):
    events: list[MxEvent] = Field(default_factory=list, max_length=1000)


class MxInfo(_Model):
    mimetype: str | None = Field(default=None, max_length=255)
    size: int | None = Field(default=None, ge=0)


class MxMentions(_Model):
    user_ids: list[str] = Field(default_factory=list, max_length=1000)


class MxContent(_Model):
    msgtype: str = Field(default="", max_length=255)
    body: str = ""
    formatted_body: str | None = None
    filename: str | None = Field(default=None, max_length=1024)
    url: str | None = Field(default=None, max_length=2048)
    file: dict[str, Any] | None = None
    info: MxInfo | None = None
    mentions: MxMentions | None = Field(default=None, alias="m.mentions")
    # Element's mark of a recorded voice message (MSC3245)
    voice: dict[str, Any] | None = Field(default=None, alias="org.matrix.msc3245.voice")


def parse_mxc(uri: str) -> tuple[str, str] | None:
    """(server name, media id) of an ``mxc://`` URI, or None when it is not one."""
    match = MXC.match(uri)
    return (match["server"], match["media"]) if match else None


def caption_of(content: MxContent) -> str:
    """What the person wrote: a file's caption (spec v1.10: ``body`` when ``filename`` is
    present and differs; else ``body`` is the file's name), or a text's body."""
    if content.msgtype not in MEDIA:
        return content.body
    return content.body if content.filename and content.filename != content.body else ""


def addressed(content: MxContent, bot: str, names: tuple[str, ...]) -> bool:
    """Whether a group room's message is for Iris (a file's name never addresses it)."""
    if content.mentions is not None and bot in content.mentions.user_ids:
        return True
    body = caption_of(content)
    if body.lstrip().startswith("/"):
        return True
    own_id = rf"{re.escape(bot)}(?![A-Za-z0-9-]|[.:][A-Za-z0-9])"
    if re.search(own_id, body, re.IGNORECASE) or re.search(own_id, content.formatted_body or ""):
        return True
    return any(
        re.search(rf"(?<!\w){re.escape(name)}(?!\w|:[A-Za-z0-9])", body, re.IGNORECASE)
        for name in names
        if name
    )


def _refusal(content: MxContent, max_bytes: int) -> str | None:
    """Why a file event is answered without a turn, or None to read it."""
    if content.file is not None and not content.url:
        return ENCRYPTED
    parsed = parse_mxc(content.url or "")
    if parsed is None:
        return "I could not read that file: it has no valid mxc:// address."
    size = content.info.size if content.info else None
    if size is not None and size > max_bytes:
        return (
            f"I could not take that file: it is {size / MB:.1f} MB, over the "
            f"{max_bytes / MB:g} MB limit. Nothing was saved."
        )
    return None


def _media(content: MxContent) -> tuple[str, Attachment]:
    """(caption, attachment) of an ``m.image``, ``m.file`` or ``m.audio`` (transcribed by the
    voice path: ``voice`` for a recorded voice message, ``audio`` for a sound file)."""
    caption = caption_of(content)
    name = content.filename or content.body
    mime = content.info.mimetype if content.info else None
    kind: Literal["image", "voice", "audio", "file"]
    if content.msgtype == "m.audio":
        kind = "voice" if content.voice is not None else "audio"
    else:
        kind = kind_for(mime or ("image/*" if content.msgtype == "m.image" else None))
    return caption, Attachment(kind=kind, ref=str(content.url), mime_type=mime, name=name[:255])


READ = ("m.room.message", "m.room.encrypted", "m.room.encryption")


def _encrypted(event: MxEvent, group: bool) -> Parsed:
    """An encrypted message (answered in a direct room only) or encryption turned on (the
    room is told once): the answer says where Iris can read."""
    if event.type == "m.room.encryption" and event.state_key != "":
        return Parsed(reason="not the room's encryption state")
    if event.type == "m.room.encrypted" and group:
        return Parsed(reason="an encrypted message in a group room (told once, at join)")
    message = InboundMessage(
        platform="matrix",
        chat_id=str(event.room_id),
        account=f"matrix:{event.sender}",
        platform_message_id=str(event.event_id),
        text="",
        is_group=group,
    )
    group_ref = message.chat_id if group else None
    return Parsed(message=message, reply=ENCRYPTED_ROOM, group_ref=group_ref)


def parse_event(
    event: MxEvent,
    *,
    bot: str,
    names: tuple[str, ...] = (),
    group: bool = False,
    group_mode: str = "mention",
    max_bytes: int = MAX_MEDIA_BYTES,
    image_bytes: int = MAX_MEDIA_BYTES,
) -> Parsed:
    """What to do with one pushed event; ``group``: the room has more than two members;
    ``max_bytes``/``image_bytes``: the caps of a file and of an image (the image intake's)."""
    if event.type not in READ or event.sender in (None, bot):
        return Parsed(reason="not a message for Iris")
    if event.event_id is None or event.room_id is None or event.sender is None:
        return Parsed(reason="no event id, room or sender")
    if event.type != "m.room.message":
        return _encrypted(event, group)
    try:
        content = MxContent.model_validate(event.content)
    except ValidationError:
        return Parsed(reason="a malformed message content")
    if content.msgtype == "m.notice":
        return Parsed(reason="a notice")
    if group and group_mode == "mention" and not addressed(content, bot, names):
        return Parsed(reason="a group message not addressed to Iris")
    text, reply = content.body, None
    attachments: tuple[Attachment, ...] = ()
    if content.msgtype in MEDIA:
        cap = min(max_bytes, image_bytes) if content.msgtype == "m.image" else max_bytes
        reply = _refusal(content, cap)
        if reply is None:
            text, attachment = _media(content)
            attachments = (attachment,)
    elif content.msgtype != "m.text":
        reply = OTHER_KINDS
    elif not text.strip():
        return Parsed(reason="nothing to read")
    message = InboundMessage(
        platform="matrix",
        chat_id=event.room_id,
        account=f"matrix:{event.sender}",
        platform_message_id=event.event_id,
        text=text,
        is_group=group,
        attachments=attachments,
    )
    return Parsed(message=message, reply=reply, group_ref=event.room_id if group else None)
