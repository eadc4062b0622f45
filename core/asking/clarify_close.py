"""Taking the buttons off a ``clarify`` question that closed without a press.

A press already edits its question's message (Telegram: the keyboard removed; Discord: the
buttons disabled, the choice marked; Slack: the buttons replaced by the choice). A question that
closes any other way (answered in words, superseded by a newer question, or found expired by the
chat's next message) would keep live buttons that only earn "this question is closed". After
the turn that closed it, ``close_buttons_after_turn`` edits the message that carried them, through
the platform sender's ``remove_buttons``: one attempt, bounded by ``EDIT_SECONDS``, a failure
logged. The answer is recorded before this runs, so nothing here can lose it. WhatsApp cannot
edit a sent message: its senders have no ``remove_buttons`` and its buttons stay.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from core.asking.clarify import is_open, typed_choice
from core.contracts.asked import Asked

if TYPE_CHECKING:
    from core.contracts.hooks import HookContext
    from core.store.clarifications import Question

log = logging.getLogger("iris.clarify")

EDIT_SECONDS = 20.0


@runtime_checkable
class ButtonRemover(Protocol):
    async def remove_buttons(self, target: dict[str, Any], message_id: str, text: str,
                             outcome: str) -> None:
        """Take the buttons off sent message ``message_id`` (``text`` is the question as
        sent; ``outcome`` says how it closed, for platforms that show it). Raises on failure."""


def closing_note(question: Question, answer: str | None) -> str:
    """How the question closed, in a few words: the choice typed, or that it closed."""
    if answer is None:
        return "closed"
    number = typed_choice(question, answer)
    return question.choices[number - 1] if number else "answered in the chat"


def _to_close(ctx: HookContext) -> list[tuple[Question, str | None]]:
    """The questions this turn closed without a press, each with the text that answered it
    (None: superseded or expired)."""
    store, entry = ctx.store, ctx.entry
    message = entry.message
    expired = None
    latest = store.clarifications.latest(entry.user_id, entry.chat_key)
    if (latest is not None and latest.closed_by is None
            and not is_open(store, ctx.settings, latest)
            and store.clarifications.close(entry.user_id, latest.id, entry.id)):
        expired = latest.id  # expired, noticed now
    closed = [q for q in store.clarifications.closed_by(entry.user_id, entry.chat_key, entry.id)
              if message.press is None or q.id != message.press.question_id]
    # (a press edited its question's message already)
    # A typed answer closed the newest of them (``settle``); asking closed older ones.
    words = message.cron is None and not message.text.lstrip().startswith("/")
    answered = next((q.id for q in reversed(closed) if q.id != expired), None) if words else None
    return [(q, message.text if q.id == answered else None) for q in closed]


async def close_buttons_after_turn(ctx: HookContext) -> None:
    entry = ctx.entry
    sender = ctx.services.senders.get(entry.message.platform)
    if not isinstance(sender, ButtonRemover):
        return
    for question, answer in _to_close(ctx):
        delivery = ctx.store.deliveries.for_question(entry.user_id, entry.chat_key, question.id)
        if delivery is None or delivery.status != "sent" or not delivery.platform_ids:
            continue  # never shown (or not yet): nothing to take off
        text = Asked(question.id, question.question, question.choices).text()
        try:
            await asyncio.wait_for(
                sender.remove_buttons(delivery.target, delivery.platform_ids[0], text,
                                      closing_note(question, answer)),
                timeout=EDIT_SECONDS)
        except Exception as exc:
            log.warning("could not take the buttons off question %s (%s): %s", question.id,
                        entry.message.platform, exc or type(exc).__name__)
