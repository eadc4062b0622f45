"""Discord buttons for ``clarify`` questions: the message components the sender attaches, and the
component interaction of a press → the ``InboundMessage`` that answers.

A question goes out with an action row (component type 1) of buttons (type 2), each with Iris'
button data as its ``custom_id``. A press reaches the interactions endpoint as an interaction of
type 3 (MESSAGE_COMPONENT), signed like every interaction. Its message id is
``<channel>:clarify:<question>``, so pressing twice records one answer; whether the press counts
at all is decided at the webhook (``core.asking.clarify.pressable``). The answer is sent as a
follow-up of the press's interaction: its "original response" is the question's own message.
"""

from __future__ import annotations

from typing import Any

from core.asking.clarify import button_data, parse_button
from core.messages import InboundMessage, Press
from core.platforms.discord_inbound import BUTTON, ComponentData, Interaction
from core.platforms.inbound import Parsed

ACTION_ROW = 1
PRIMARY, SECONDARY = 1, 2
UPDATE_MESSAGE = 7
BUTTONS_PER_ROW = 5
LABEL_LIMIT = 80  # Discord's limit for a button's label


def _rows(buttons: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": ACTION_ROW, "components": buttons[i:i + BUTTONS_PER_ROW]}
            for i in range(0, len(buttons), BUTTONS_PER_ROW)]


def question_components(choices: dict[str, Any]) -> list[dict[str, Any]]:
    """A button per choice, its custom id the choice's button data."""
    return _rows([
        {"type": BUTTON, "style": SECONDARY, "label": label[:LABEL_LIMIT],
         "custom_id": button_data(choices["id"], n)}
        for n, label in enumerate(choices["labels"], 1)
    ])


def answered_components(question_id: str, labels: tuple[str, ...],
                        chosen: int) -> list[dict[str, Any]]:
    """The question once answered: every button disabled, the chosen one marked."""
    return _rows([
        {"type": BUTTON, "style": PRIMARY if n == chosen else SECONDARY,
         "label": label[:LABEL_LIMIT], "custom_id": button_data(question_id, n),
         "disabled": True}
        for n, label in enumerate(labels, 1)
    ])


def parse_press(interaction: Interaction) -> Parsed:
    """A component interaction as the message it answers with: the chosen choice of the
    question its custom id names."""
    data = interaction.data
    if not isinstance(data, ComponentData) or data.component_type != BUTTON:
        return Parsed(reason="not a button press")
    chosen = parse_button(data.custom_id)
    person = interaction.member.user if interaction.member else interaction.user
    if chosen is None:
        return Parsed(reason="not a button of Iris'")
    if person is None or person.bot or interaction.channel_id is None:
        return Parsed(reason="not from a person in a channel")
    question_id, number = chosen
    channel = interaction.channel_id
    in_guild = interaction.guild_id is not None
    name = (interaction.member.nick if interaction.member else None) or person.global_name \
        or person.username or person.id
    message = InboundMessage(
        platform="discord", chat_id=channel, account=f"discord:{person.id}",
        platform_message_id=f"{channel}:clarify:{question_id}", text=str(number),
        is_group=in_guild, display_name=name,
        meta={"channel_id": channel, "application_id": interaction.application_id,
              "interaction_token": interaction.token, "followup": True},
        press=Press(question_id, number),
    )
    group = f"{interaction.guild_id}:{channel}" if in_guild else None
    return Parsed(message=message, group_ref=group)
