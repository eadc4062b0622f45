"""Slack events and slash commands → ``InboundMessage``.

- A direct message (``im``) is the sender's own chat; a thread in it is its own chat.
- In channels, private channels and group DMs the data belongs to the channel's group scope.
  A mention (``app_mention``) is answered in a thread, and that thread is its own chat; later
  messages in a thread Iris is already part of are answered without a new mention. With
  ``group_reply_mode: all`` every channel message is answered.
- ``/iris <command> [args]`` runs ``/<command>``; its answer goes to the command's
  ``response_url``.
- Files shared with a message (``files``, subtype ``file_share``) become attachments: pictures
  ``image``, the rest ``file``; the sender downloads ``url_private_download`` with the bot token
  (the app needs the ``files:read`` scope). Deleted or plan-hidden files are named, not read.
- The platform message id is ``team:channel:ts``, the same for a message's ``message`` and
  ``app_mention`` events and for Slack's retries of either, so each is recorded once.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from core.messages import Attachment, InboundMessage
from core.platforms.inbound import Parsed
from core.platforms.media import MAX_ATTACHMENTS, kind_for, over_limit_note

ACCEPTED_SUBTYPES = frozenset({None, "file_share", "thread_broadcast"})
GROUP_CHANNEL_TYPES = frozenset({"channel", "group", "mpim"})
LINK = re.compile(r"<((?:https?|mailto):[^|>\s]+)(?:\|([^>]*))?>")
ID = r"[A-Za-z0-9_-]{1,64}"


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


class SlackFile(_Model):
    """A shared file, as loosely as Slack may send it: one odd file must not make the whole
    event a 400 (Slack would re-send it); the sender checks the URL before using it."""

    id: str = ""
    name: str | None = None
    title: str | None = None
    mimetype: str | None = None
    filetype: str | None = None
    size: int | None = None
    mode: str | None = None
    url_private: str | None = None
    url_private_download: str | None = None


class SlackEvent(_Model):
    type: str = Field(min_length=1, max_length=100)
    subtype: str | None = None
    user: str | None = Field(default=None, pattern=f"^{ID}$")
    bot_id: str | None = None
    text: str = ""
    ts: str | None = Field(default=None, pattern=r"^\d{1,12}\.\d{1,9}$")
    thread_ts: str | None = Field(default=None, pattern=r"^\d{1,12}\.\d{1,9}$")
    channel: str | None = Field(default=None, pattern=f"^{ID}$")
    channel_type: str | None = None
    team: str | None = None
    files: list[SlackFile] = Field(default_factory=list, max_length=100)


class SlackAuthorization(_Model):
    user_id: str | None = None
    is_bot: bool = False


class SlackEnvelope(_Model):
    type: str = Field(min_length=1, max_length=100)
    team_id: str | None = Field(default=None, pattern=f"^{ID}$")
    event_id: str | None = None
    event: SlackEvent | None = None
    authorizations: list[SlackAuthorization] = Field(default_factory=list)
    challenge: str | None = None


class SlackCommand(_Model):
    command: str = Field(min_length=2, max_length=100)
    text: str = ""
    user_id: str = Field(pattern=f"^{ID}$")
    user_name: str | None = None
    channel_id: str = Field(pattern=f"^{ID}$")
    team_id: str = Field(pattern=f"^{ID}$")
    response_url: str = Field(pattern=r"^https?://\S+$")
    trigger_id: str = Field(min_length=1, max_length=200)


def bot_user_of(envelope: SlackEnvelope) -> str | None:
    return next((a.user_id for a in envelope.authorizations if a.is_bot and a.user_id), None)


def readable(text: str, bot_user_id: str | None) -> str:
    """Slack's text as a person wrote it: without the bot's mention, links spelled out,
    entities unescaped."""
    if bot_user_id:
        text = text.replace(f"<@{bot_user_id}>", "")
    else:
        text = re.sub(r"^\s*<@[UW][A-Z0-9]+>", "", text)
    text = LINK.sub(lambda m: f"{m.group(2)} ({m.group(1)})" if m.group(2) else m.group(1), text)
    text = re.sub(r"[ \t]{2,}", " ", html.unescape(text))
    return text.strip()


def attachments_of(files: list[SlackFile]) -> tuple[tuple[Attachment, ...], str]:
    """The files Iris reads, and a note naming those it does not."""
    found: list[Attachment] = []
    notes: list[str] = []
    skipped: list[str] = []
    for file in files:
        name = (file.name or file.title or file.id or "file")[:200]
        url = file.url_private_download or file.url_private
        if file.mode in ("tombstone", "hidden_by_limit", "external") or url is None:
            notes.append(f"[the user shared {name!r}, which Iris cannot open on Slack]")
        elif len(found) >= MAX_ATTACHMENTS:
            skipped.append(name)
        else:
            found.append(Attachment(kind=kind_for(file.mimetype), ref=url,
                                    mime_type=file.mimetype, name=name))
    if skipped:
        notes.append(over_limit_note(skipped))
    return tuple(found), "\n".join(notes)


# engaged(group_ref, chat_key): has Iris already talked in this thread?
Engaged = Callable[[str, str], bool]


def parse_event(
    envelope: SlackEnvelope, *, bot_user_id: str | None, engaged: Engaged,
    group_mode: str = "mention",
) -> Parsed:
    event = envelope.event
    if event is None or event.type not in ("message", "app_mention"):
        return Parsed(reason="not a message event")
    if event.subtype not in ACCEPTED_SUBTYPES or event.bot_id:
        return Parsed(reason=f"ignored message subtype {event.subtype or 'bot'}")
    if not (event.user and event.channel and event.ts):
        return Parsed(reason="message without user, channel or ts")
    if bot_user_id and event.user == bot_user_id:
        return Parsed(reason="Iris' own message")
    team = event.team or envelope.team_id or "T"
    chat_id = f"{team}:{event.channel}"
    is_dm = event.channel_type == "im" or (
        event.channel_type is None and event.channel.startswith("D")
    )
    if is_dm:
        thread = event.thread_ts
    elif event.type == "app_mention":
        thread = event.thread_ts or event.ts
    elif event.channel_type in GROUP_CHANNEL_TYPES:
        thread = event.thread_ts
        chat_key = f"slack:{chat_id}:{thread}" if thread else f"slack:{chat_id}"
        if group_mode != "all" and not (thread and engaged(chat_id, chat_key)):
            return Parsed(reason="channel message not addressed to Iris")
    else:
        return Parsed(reason=f"unsupported channel type {event.channel_type}")
    text = readable(event.text, bot_user_id)
    attachments, note = attachments_of(event.files)
    if note:
        text = f"{text}\n\n{note}" if text else note
    if not text and not attachments:
        return Parsed(reason="empty message")
    account = f"slack:{team}/{event.user}"
    if not is_dm and not text.startswith("/"):
        text = f"[<@{event.user}>] {text}"
    message = InboundMessage(
        platform="slack", chat_id=chat_id, account=account,
        platform_message_id=f"{chat_id}:{event.ts}", text=text, thread_id=thread,
        is_group=not is_dm, attachments=attachments,
        meta={"channel": event.channel, "thread_ts": thread, "event_id": envelope.event_id},
    )
    return Parsed(message=message, group_ref=None if is_dm else chat_id)


def parse_command(command: SlackCommand) -> Parsed:
    """``/iris new`` → ``/new``; ``/iris`` alone → ``/help``."""
    text = command.text.strip()
    text = text if text.startswith("/") else (f"/{text}" if text else "/help")
    chat_id = f"{command.team_id}:{command.channel_id}"
    is_dm = command.channel_id.startswith("D")
    message = InboundMessage(
        platform="slack", chat_id=chat_id, account=f"slack:{command.team_id}/{command.user_id}",
        platform_message_id=f"{command.team_id}:command:{command.trigger_id}", text=text,
        is_group=not is_dm, display_name=command.user_name,
        meta={"channel": command.channel_id, "thread_ts": None,
              "response_url": command.response_url},
    )
    return Parsed(message=message, group_ref=None if is_dm else chat_id)
