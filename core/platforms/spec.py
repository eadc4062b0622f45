"""What Iris needs to know of a platform (``PlatformSpec``) and the set of them
(``Platforms``); the registered platforms are in ``core.platforms.registry``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.config import Settings
    from core.contracts.senders import Sender
    from core.messages import InboundMessage


@dataclass(frozen=True)
class ChatAddress:
    """A chat Iris can push to later (scheduled results): its key, what the sender needs to
    reach it (no message to quote, no one-off reply URL), and how to name it to a person."""

    chat_key: str
    address: dict[str, Any]
    label: str


def default_reply_address(message: InboundMessage) -> dict[str, Any]:
    """Where a reply to ``message`` goes: its chat, its thread, and what the parser kept in
    ``meta`` for the sender (the message to quote, a one-off response URL)."""
    return {"chat_id": message.chat_id, "thread_id": message.thread_id, **message.meta}


def same_chat_id(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two push addresses name the same chat, where a chat is its id alone."""
    return str(a.get("chat_id")) == str(b.get("chat_id"))


@dataclass(frozen=True, kw_only=True)
class PlatformSpec:
    name: str
    # Its senders were authenticated by Iris itself (the API key, the operator, the scheduler):
    # no pairing. Strangers on any other platform must pair first (or be allow-listed).
    trusted: bool = False
    # Iris can send into its chats on its own: replies after the ack, scheduled results.
    # (HTTP and CLI callers read their answers from the request they are waiting on.)
    push: bool = False
    # Its people have no chat Iris can push to: scheduled results wait in their Iris inbox.
    inbox: bool = False
    # A person reads the chat and can answer: held commands wait there for /approve.
    interactive: bool = False
    # Nobody is there at all (scheduled runs): it may not start further runs.
    unattended: bool = False
    # The module in ``functions/`` whose ``build_router(rt)`` serves the platform's webhooks.
    webhook: str | None = None
    # Builds the platform's sender from the settings; None when it is not configured.
    sender: Callable[[Settings], Sender | None] | None = None
    # A line of the system prompt for conversations on this platform.
    prompt_hint: str = ""
    # How a reply to an inbound message is addressed (what the sender needs).
    reply_address: Callable[[InboundMessage], dict[str, Any]] = default_reply_address
    # Push platforms: the chat an inbound message came from, as a later push target; a chat
    # named in text (``<name>:<rest>``, e.g. "telegram:12345"), raising IrisUsageError with
    # ``chat_help`` when ``rest`` is not one; and whether two addresses are the same chat.
    chat_address: Callable[[InboundMessage], ChatAddress] | None = None
    parse_chat: Callable[[str], ChatAddress] | None = None
    same_chat: Callable[[dict[str, Any], dict[str, Any]], bool] | None = None
    chat_help: str = ""


class Platforms:
    def __init__(self, specs: Iterable[PlatformSpec]) -> None:
        self._specs: dict[str, PlatformSpec] = {}
        for spec in specs:
            if spec.name in self._specs:
                raise ValueError(f"platform {spec.name!r} is registered twice")
            self._specs[spec.name] = spec

    def __getitem__(self, name: str) -> PlatformSpec:
        """The spec of ``name``; an unknown platform gets the most careful one (untrusted,
        no push, nobody to approve anything)."""
        return self._specs.get(name) or PlatformSpec(name=name)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __iter__(self) -> Iterator[PlatformSpec]:
        return iter(self._specs.values())

    def push_names(self) -> tuple[str, ...]:
        return tuple(spec.name for spec in self if spec.push)

    def senders(self, settings: Settings) -> dict[str, Sender]:
        """A sender for every configured platform that has one."""
        found: dict[str, Sender] = {}
        for spec in self:
            sender = spec.sender(settings) if spec.sender is not None else None
            if sender is not None:
                found[spec.name] = sender
        return found

    def webhooks(self) -> list[str]:
        return [spec.webhook for spec in self if spec.webhook]
