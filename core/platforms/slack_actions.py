"""Slack buttons for ``clarify`` questions: the Block Kit blocks the sender posts, and the
``block_actions`` interactivity payload of a press → the ``InboundMessage`` that answers.

A press is Slack's form post ``payload=<json>`` to the same request URL as events; its
signature is checked like theirs. The message id is ``team:channel:clarify:<question>``, so
pressing twice records one answer; whether the press counts at all is decided at the webhook
(``core.asking.clarify.pressable``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from core.asking.clarify import button_data, parse_button
from core.messages import InboundMessage, Press
from core.platforms.inbound import Parsed

ID = r"^[A-Za-z0-9_-]{1,64}$"
TS = r"^\d{1,12}\.\d{1,9}$"
BUTTON_TEXT = 75  # Slack's limit for a button's text


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


class SlackRef(_Model):
    id: str = Field(pattern=ID)
    team_id: str | None = Field(default=None, pattern=ID)


class SlackContainer(_Model):
    type: str = ""
    message_ts: str | None = Field(default=None, pattern=TS)
    channel_id: str | None = Field(default=None, pattern=ID)


class SlackActionMessage(_Model):
    ts: str = Field(pattern=TS)
    thread_ts: str | None = Field(default=None, pattern=TS)


class SlackAction(_Model):
    type: str = ""
    action_id: str = ""
    value: str | None = Field(default=None, max_length=2000)


class SlackActions(_Model):
    """The fields of a ``block_actions`` payload that Iris reads."""

    type: str
    user: SlackRef
    team: SlackRef | None = None
    channel: SlackRef | None = None
    container: SlackContainer = Field(default_factory=SlackContainer)
    message: SlackActionMessage | None = None
    actions: list[SlackAction] = Field(default_factory=list, max_length=10)


def question_blocks(text: str, choices: dict[str, Any]) -> list[dict[str, Any]]:
    """The question's text and a button per choice."""
    buttons = [
        {"type": "button", "action_id": f"clarify_{n}", "value": button_data(choices["id"], n),
         "text": {"type": "plain_text", "text": label[:BUTTON_TEXT], "emoji": True}}
        for n, label in enumerate(choices["labels"], 1)
    ]
    return [{"type": "section", "text": {"type": "mrkdwn", "text": text[:3000]}},
            {"type": "actions", "block_id": f"clarify:{choices['id']}", "elements": buttons}]


def answered_blocks(text: str, chosen: str) -> list[dict[str, Any]]:
    """The question once answered: the buttons give way to the choice made."""
    return [{"type": "section", "text": {"type": "mrkdwn", "text": text[:3000]}},
            {"type": "context", "elements": [{"type": "mrkdwn", "text": f"→ {chosen}"}]}]


def parse_press(payload: SlackActions) -> Parsed:
    if payload.type != "block_actions" or payload.message is None:
        return Parsed(reason="not a button press on a message")
    chosen = next((parse_button(a.value or "") for a in payload.actions
                   if a.type == "button" and parse_button(a.value or "")), None)
    channel = (payload.channel.id if payload.channel else None) or payload.container.channel_id
    team = (payload.team.id if payload.team else None) or payload.user.team_id or "T"
    if chosen is None or channel is None:
        return Parsed(reason="not a button of Iris'")
    question_id, number = chosen
    chat_id = f"{team}:{channel}"
    is_dm = channel.startswith("D")
    thread = payload.message.thread_ts
    message = InboundMessage(
        platform="slack", chat_id=chat_id, account=f"slack:{team}/{payload.user.id}",
        platform_message_id=f"{chat_id}:clarify:{question_id}", text=str(number),
        thread_id=thread, is_group=not is_dm,
        meta={"channel": channel, "thread_ts": thread, "question_ts": payload.message.ts},
        press=Press(question_id, number),
    )
    return Parsed(message=message, group_ref=None if is_dm else chat_id)
