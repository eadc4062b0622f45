"""Teams buttons for ``clarify`` questions: the Adaptive Card the sender attaches, and the
activity of a press → the ``InboundMessage`` that answers.

A question goes out with an Adaptive Card attachment whose actions are ``Action.Submit``
buttons, each with Iris' button data in its ``data`` (``{"iris": …}``). Teams posts a press to
the messaging endpoint as a ``message`` activity with that ``data`` as its ``value`` and no
text, signed like every activity. Its message id is ``<conversation>:clarify:<question>``, so
pressing twice records one answer; whether the press counts is decided at the webhook
(``core.asking.clarify.pressable``).
"""

from __future__ import annotations

from typing import Any

from core.asking.clarify import button_data, parse_button
from core.messages import InboundMessage, Press
from core.platforms.inbound import Parsed
from core.platforms.teams_inbound import MESSAGE, Activity, is_group, person, reply_meta

CARD_TYPE = "application/vnd.microsoft.card.adaptive"
CARD_VERSION = "1.4"
DATA_KEY = "iris"
TITLE_LIMIT = 80


def question_card(choices: dict[str, Any]) -> dict[str, Any]:
    """An Adaptive Card attachment with an ``Action.Submit`` button per choice."""
    return {"contentType": CARD_TYPE, "content": {
        "type": "AdaptiveCard", "version": CARD_VERSION,
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "body": [],
        "actions": [{"type": "Action.Submit", "title": label[:TITLE_LIMIT],
                     "data": {DATA_KEY: button_data(choices["id"], n)}}
                    for n, label in enumerate(choices["labels"], 1)],
    }}


def press_data(activity: Activity) -> str | None:
    value = activity.value
    if activity.type != MESSAGE or not isinstance(value, dict):
        return None
    data = value.get(DATA_KEY)
    return data if isinstance(data, str) else None


def parse_press(activity: Activity) -> Parsed:
    """A submitted card as the message it answers with: the chosen choice of the question its
    data names."""
    chosen = parse_button(press_data(activity) or "")
    if chosen is None:
        return Parsed(reason="not a button of Iris'")
    who = person(activity)
    if who is None or activity.id is None:
        return Parsed(reason="not from a person in a conversation")
    assert activity.conversation is not None
    question_id, number = chosen
    conversation = activity.conversation.id
    group = is_group(activity.conversation)
    message = InboundMessage(
        platform="teams", chat_id=conversation, account=f"teams:{who.id}",
        platform_message_id=f"{conversation}:clarify:{question_id}", text=str(number),
        is_group=group, display_name=who.name or who.id,
        meta=reply_meta(activity), press=Press(question_id, number),
    )
    return Parsed(message=message, group_ref=conversation if group else None)
