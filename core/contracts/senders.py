"""What a platform's sender is, for the modules that hand it work: the ``Sender`` protocol and
the abilities some senders have (parts, whole records, reopening a window, voice), and the
failure a send reports. Types of their own, so intake, voice and the dashboard name a sender
without importing the delivery service that drives them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from core.store.deliveries import Delivery


class DeliveryFailed(Exception):
    def __init__(self, message: str, *, retryable: bool = True, retry_after: float | None = None,
                 window_closed: bool = False):
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.window_closed = window_closed  # the platform refused: outside its reply window


class Sender(Protocol):
    async def send(self, target: dict[str, Any], text: str) -> list[str]:
        """Send ``text``; returns the platform's ids of the sent message(s)."""


@runtime_checkable
class PartSender(Sender, Protocol):
    """A sender that splits long replies. The service sends part by part and records each
    sent part, so a retry after a failure in the middle sends only the parts still missing."""

    def parts(self, text: str) -> list[Any]: ...

    async def send_part(self, target: dict[str, Any], part: Any, index: int) -> str: ...


@runtime_checkable
class RecordSender(Sender, Protocol):
    """A sender that needs the whole delivery (its id and owner), not only target and text."""

    async def send_record(self, delivery: Delivery) -> list[str]: ...


@runtime_checkable
class Reopener(Sender, Protocol):
    """A platform that only lets Iris write within a window after the person's last message,
    and can ask the person to reopen it (WhatsApp's template messages)."""

    can_reopen: bool

    async def reopen(self, target: dict[str, Any], text: str) -> str: ...


@runtime_checkable
class VoiceSender(Sender, Protocol):
    """A sender that can send a voice note (spoken replies)."""

    async def send_voice(self, target: dict[str, Any], audio: bytes, filename: str) -> str: ...
