"""Google Chat interaction events (an HTTP endpoint Chat app) → ``InboundMessage``; and the card
v2 buttons of ``clarify`` questions.

Chat POSTs an event to the app's URL. A ``MESSAGE`` event is a message: in a direct message
the chat is the person's; in a space (where the app hears only messages that @mention it) the
space's group scope owns the data, the member is named in the text, and ``argumentText`` (the
text without the mention) is what Iris reads; a registered slash command (``slashCommand``) is
read whole (``/new``…). The message's resource name
(``spaces/…/messages/…``) is the inbox's idempotency key; the space and thread are kept in
``meta`` so the answer goes into the same thread.

A question goes out with a card (``cardsV2``) holding a button per choice; its ``onClick``
action names the function ``iris_choice`` with Iris' button data as a parameter. A press comes
back as a ``CARD_CLICKED`` event; its message id is ``<space>:clarify:<question>``, so pressing
twice records one answer (whether it counts is decided at the webhook).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from core.asking.clarify import button_data, parse_button
from core.messages import Attachment, InboundMessage, Press
from core.platforms.inbound import Parsed
from core.platforms.media import MAX_ATTACHMENTS, kind_for

MESSAGE, CARD_CLICKED = "MESSAGE", "CARD_CLICKED"
CHOICE_FUNCTION = "iris_choice"
DATA_KEY = "iris"
BUTTON_TEXT_LIMIT = 80
NAME = r"^[A-Za-z0-9_./-]{1,256}$"


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class ChatUser(_Model):
    name: str = Field(pattern=r"^users/[A-Za-z0-9_.-]{1,128}$")
    display_name: str | None = Field(default=None, alias="displayName", max_length=512)
    type: str | None = None


class Space(_Model):
    name: str = Field(pattern=r"^spaces/[A-Za-z0-9_-]{1,128}$")
    type: str | None = None  # DM | ROOM (deprecated, still sent)
    space_type: str | None = Field(default=None, alias="spaceType")
    display_name: str | None = Field(default=None, alias="displayName", max_length=512)


class Thread(_Model):
    name: str | None = Field(default=None, pattern=NAME)


class AttachmentDataRef(_Model):
    resource_name: str = Field(alias="resourceName", pattern=r"^[A-Za-z0-9_.=+-]{1,1024}$")


class ChatAttachment(_Model):
    content_name: str | None = Field(default=None, alias="contentName", max_length=512)
    content_type: str | None = Field(default=None, alias="contentType", max_length=255)
    source: str | None = None
    attachment_data_ref: AttachmentDataRef | None = Field(default=None,
                                                         alias="attachmentDataRef")


class ChatMessage(_Model):
    name: str = Field(pattern=NAME)
    text: str | None = None
    attachment: list[ChatAttachment] = Field(default_factory=list, max_length=100)
    slash_command: dict[str, Any] | None = Field(default=None, alias="slashCommand")
    argument_text: str | None = Field(default=None, alias="argumentText")
    thread: Thread | None = None
    sender: ChatUser | None = None


class ActionParameter(_Model):
    key: str = Field(max_length=64)
    value: str = Field(max_length=256)


class Action(_Model):
    action_method_name: str | None = Field(default=None, alias="actionMethodName")
    parameters: list[ActionParameter] = Field(default_factory=list, max_length=20)


class Event(_Model):
    type: str = Field(max_length=64)
    event_time: str | None = Field(default=None, alias="eventTime")
    message: ChatMessage | None = None
    user: ChatUser | None = None
    space: Space | None = None
    action: Action | None = None


def is_group(space: Space) -> bool:
    return not (space.space_type == "DIRECT_MESSAGE" or space.type == "DM")


def _meta(event: Event) -> dict[str, Any]:
    assert event.space is not None
    meta: dict[str, Any] = {"space": event.space.name}
    thread = event.message.thread if event.message else None
    if thread is not None and thread.name:
        meta["thread"] = thread.name
    return meta


def _person(event: Event) -> ChatUser | None:
    who = event.user or (event.message.sender if event.message else None)
    if who is None or event.space is None or who.type == "BOT":
        return None
    return who


def files(message: ChatMessage) -> tuple[Attachment, ...]:
    """Uploaded files and pictures, by the resource name the Chat API downloads them by
    (``media.download``); Drive files are not read."""
    return tuple(
        Attachment(kind=kind_for(a.content_type), ref=a.attachment_data_ref.resource_name,
                   mime_type=a.content_type, name=a.content_name)
        for a in message.attachment
        if a.attachment_data_ref is not None and a.source in (None, "UPLOADED_CONTENT")
    )[:MAX_ATTACHMENTS]


def parse_event(event: Event) -> Parsed:
    if event.type != MESSAGE or event.message is None:
        return Parsed(reason=f"event type {event.type!r} is not a message")
    who = _person(event)
    if who is None:
        return Parsed(reason="not a message from a person in a space")
    assert event.space is not None
    group = is_group(event.space)
    # a registered slash command's argumentText is only its arguments: read the whole text
    typed = event.message.slash_command is None and event.message.argument_text is not None
    raw = event.message.argument_text if group and typed else event.message.text
    text = (raw or "").strip()
    attachments = files(event.message)
    if not text and not attachments:
        return Parsed(reason="empty message")
    name = who.display_name or who.name
    if group and not text.startswith("/"):
        text = f"[{name}] {text}"
    space = event.space.name
    message = InboundMessage(
        platform="googlechat", chat_id=space, account=f"googlechat:{who.name}",
        platform_message_id=event.message.name, text=text, is_group=group, display_name=name,
        attachments=attachments, meta=_meta(event),
    )
    return Parsed(message=message, group_ref=space if group else None,
                  group_title=event.space.display_name)


def question_cards(choices: dict[str, Any]) -> list[dict[str, Any]]:
    """``cardsV2`` with a button per choice, each calling ``iris_choice`` with its data."""
    buttons = [{"text": label[:BUTTON_TEXT_LIMIT], "onClick": {"action": {
        "function": CHOICE_FUNCTION,
        "parameters": [{"key": DATA_KEY, "value": button_data(choices["id"], n)}]}}}
        for n, label in enumerate(choices["labels"], 1)]
    return [{"cardId": f"iris-{choices['id']}"[:64],
             "card": {"sections": [{"widgets": [{"buttonList": {"buttons": buttons}}]}]}}]


def parse_click(event: Event) -> Parsed:
    """A ``CARD_CLICKED`` event as the message it answers with."""
    action = event.action
    if event.type != CARD_CLICKED or action is None or \
            action.action_method_name != CHOICE_FUNCTION:
        return Parsed(reason="not a press of Iris' button")
    data = next((p.value for p in action.parameters if p.key == DATA_KEY), "")
    chosen = parse_button(data)
    who = _person(event)
    if chosen is None or who is None:
        return Parsed(reason="not a press of Iris' button by a person")
    assert event.space is not None
    question_id, number = chosen
    space = event.space.name
    group = is_group(event.space)
    message = InboundMessage(
        platform="googlechat", chat_id=space, account=f"googlechat:{who.name}",
        platform_message_id=f"{space}:clarify:{question_id}", text=str(number),
        is_group=group, display_name=who.display_name or who.name,
        meta=_meta(event), press=Press(question_id, number),
    )
    return Parsed(message=message, group_ref=space if group else None)
