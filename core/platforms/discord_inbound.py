"""Discord interactions → ``InboundMessage``.

Iris is reached through Discord's interactions endpoint (no always-on gateway): ``/ask text:…``
is a message, and each of Iris' slash commands is a Discord command (``/new``, ``/memory
args:archive``…). In a direct message the chat is the person's; in a server channel the data
belongs to the channel's group scope and the member is named in the text. The interaction id is
the inbox's idempotency key; the interaction token (valid 15 minutes) is kept in ``meta`` so the
answer edits the deferred response.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from core.messages import InboundMessage
from core.platforms.inbound import Parsed

PING = 1
APPLICATION_COMMAND = 2
MESSAGE_COMPONENT = 3
BUTTON = 2  # a component's type
SNOWFLAKE = r"^\d{1,32}$"
ASK = "ask"


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


class DiscordUser(_Model):
    id: str = Field(pattern=SNOWFLAKE)
    username: str = ""
    global_name: str | None = None
    bot: bool = False


class DiscordMember(_Model):
    user: DiscordUser | None = None
    nick: str | None = None


class DiscordOption(_Model):
    name: str = Field(max_length=32)
    type: int
    value: str | int | float | bool | None = None


class DiscordCommandData(_Model):
    id: str | None = None
    name: str = Field(min_length=1, max_length=32)
    type: int = 1
    options: list[DiscordOption] = Field(default_factory=list, max_length=25)


class ComponentData(_Model):
    """A press on a message component (an interaction of type 3)."""

    custom_id: str = Field(max_length=100)
    component_type: int


class Interaction(_Model):
    id: str = Field(pattern=SNOWFLAKE)
    application_id: str = Field(pattern=SNOWFLAKE)
    type: int
    token: str = Field(min_length=1, max_length=1000)
    version: int = 1
    data: DiscordCommandData | ComponentData | None = None
    guild_id: str | None = Field(default=None, pattern=SNOWFLAKE)
    channel_id: str | None = Field(default=None, pattern=SNOWFLAKE)
    member: DiscordMember | None = None
    user: DiscordUser | None = None


def command_text(data: DiscordCommandData) -> str:
    """``/ask text:…`` → the text; ``/memory args:archive`` → ``/memory archive``."""
    values = [str(o.value) for o in data.options if o.value is not None]
    if data.name == ASK:
        return " ".join(values)
    return " ".join([f"/{data.name}", *values]).strip()


def parse_interaction(interaction: Interaction) -> Parsed:
    if interaction.type != APPLICATION_COMMAND or not isinstance(interaction.data,
                                                                 DiscordCommandData):
        return Parsed(reason=f"interaction type {interaction.type} is not a command")
    person = interaction.member.user if interaction.member else interaction.user
    if person is None or person.bot or interaction.channel_id is None:
        return Parsed(reason="not from a person in a channel")
    text = command_text(interaction.data)
    if not text.strip():
        return Parsed(reason="empty command")
    name = (interaction.member.nick if interaction.member else None) or person.global_name \
        or person.username or person.id
    in_guild = interaction.guild_id is not None
    if in_guild and not text.startswith("/"):
        text = f"[{name}] {text}"
    channel = interaction.channel_id
    message = InboundMessage(
        platform="discord", chat_id=channel, account=f"discord:{person.id}",
        platform_message_id=f"interaction:{interaction.id}", text=text, is_group=in_guild,
        display_name=name,
        meta={"channel_id": channel, "application_id": interaction.application_id,
              "interaction_token": interaction.token},
    )
    group = f"{interaction.guild_id}:{channel}" if in_guild else None
    return Parsed(message=message, group_ref=group)
