"""Questions the model asks the user (the ``clarify`` tool) and their answers.

Asking stores the question and ends the turn: the question, with its choices numbered, is that
turn's answer, and platforms with buttons (Telegram, Slack, Discord, WhatsApp) show a button
per choice. The
answer is the user's next message in the chat: a press of a button (checked at the webhook:
the person who was asked, the chat's latest open question, not expired), the number of a
choice, a choice's text, or anything else in their own words. The first message after the
question closes it, so a second press, a stale press or another person's press starts nothing.
A question that closed without a press loses its buttons after the turn
(``core.asking.clarify_close``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.contracts.asked import Asked
from core.ids import new_id

if TYPE_CHECKING:
    from core.config import Settings
    from core.store import Store
    from core.store.clarifications import Question
    from core.store.inbox import InboxEntry

MAX_CHOICES = 4
PRESS_REFUSED = "This question is closed, or it was not asked to you."
DATA_PREFIX = "clarify:"
_DATA = re.compile(rf"^clarify:([A-Za-z0-9_]{{1,40}}):([1-{MAX_CHOICES}])$")


def button_data(question_id: str, number: int) -> str:
    return f"{DATA_PREFIX}{question_id}:{number}"


def parse_button(data: str) -> tuple[str, int] | None:
    """``(question id, choice number)`` from a button's data, or None if it is not ours."""
    match = _DATA.match(data or "")
    return (match[1], int(match[2])) if match else None


def ask(store: Store, *, user_id: str, session_id: str, chat_key: str, account: str,
        question: str, choices: Sequence[str], inbox_id: int | None = None) -> Asked:
    """Store a new question; the chat's older open ones are closed by the asking entry
    ``inbox_id`` (superseded), so their buttons are taken off after the turn."""
    asked = Asked(new_id("q"), question, tuple(choices))
    store.clarifications.add(user_id, asked.id, session_id=session_id, chat_key=chat_key,
                             account=account, question=question, choices=asked.choices)
    if inbox_id is not None:
        store.clarifications.supersede(user_id, chat_key, inbox_id, keep=asked.id)
    return asked


def is_open(store: Store, settings: Settings, question: Question | None) -> bool:
    if question is None or question.closed_by is not None:
        return False
    return store.clock.now() - question.created_at <= settings.clarify_hours * 3600


def pressable(store: Store, settings: Settings, *, user_id: str, chat_key: str, account: str,
              question_id: str, number: int) -> Question | None:
    """The question a button press answers, or None when the press must be ignored: another
    person's, an answered or superseded question, an expired one, a choice it does not have."""
    question = store.clarifications.get(user_id, question_id)
    if question is None or question.account != account or question.chat_key != chat_key:
        return None
    if not is_open(store, settings, question) or not 1 <= number <= len(question.choices):
        return None
    latest = store.clarifications.latest(user_id, chat_key)
    return question if latest is not None and latest.id == question.id else None


def typed_choice(question: Question, text: str) -> int | None:
    said = " ".join(text.split()).rstrip(".").strip().lower()
    if said.isdigit() and 1 <= int(said) <= len(question.choices):
        return int(said)
    for number, label in enumerate(question.choices, 1):
        if said == " ".join(label.split()).lower():
            return number
    return None


@dataclass(frozen=True)
class Settled:
    text: str
    stale: bool = False  # a button press whose question was closed meanwhile: no turn


def answer_text(question: Question, number: int) -> str:
    return f'[answer to "{question.question}"] {number}. {question.choices[number - 1]}'


def settle(store: Store, settings: Settings, entry: InboxEntry, text: str) -> Settled:
    """The user's message as the model should see it, closing the chat's open question."""
    press = entry.message.press
    question = store.clarifications.latest(entry.user_id, entry.chat_key)
    mine = question is not None and question.closed_by == entry.id  # a retried turn
    if question is None or not (mine or is_open(store, settings, question)):
        return Settled(text, stale=press is not None)
    if press is not None:
        number = press.choice
        if press.question_id != question.id or not 1 <= number <= len(question.choices):
            return Settled(text, stale=True)
    elif text.lstrip().startswith("/"):
        return Settled(text)  # a command leaves the question open
    else:
        number = typed_choice(question, text) or 0
    if not store.clarifications.close(entry.user_id, question.id, entry.id):
        return Settled(text, stale=press is not None)
    return Settled(answer_text(question, number) if number else text)
