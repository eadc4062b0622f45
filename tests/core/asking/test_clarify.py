"""The rules of ``clarify`` questions on a real store with a ManualClock: who may answer, when a
question is stale, how a typed answer is read, and that a retried turn keeps its answer."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core.asking.clarify import ask, button_data, parse_button, pressable, settle
from core.clock import ManualClock
from core.messages import InboundMessage, Press
from core.store.inbox import InboxEntry

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
CHAT = "telegram:4242"


@pytest.fixture
def clock():
    return ManualClock(START)


def entry(entry_id, text, clarify=None, choice=0):
    press = Press(clarify, choice) if clarify is not None else None
    message = InboundMessage(platform="telegram", chat_id="4242", account="telegram:4242",
                             platform_message_id=f"m{entry_id}", text=text, press=press)
    return InboxEntry(id=entry_id, user_id="u1", chat_key=CHAT, message=message,
                      status="pending", attempts=1, session_id=None, reply=None, error=None,
                      received_at=0.0, done_at=None)


def question(store, text="Which size?", choices=("Small", "Large")):
    return ask(store, user_id="u1", session_id="s1", chat_key=CHAT, account="telegram:4242",
               question=text, choices=choices)


def can_press(store, settings, asked, number=1, account="telegram:4242", user_id="u1"):
    return pressable(store, settings, user_id=user_id, chat_key=CHAT, account=account,
                     question_id=asked.id, number=number) is not None


def test_button_data_round_trips_and_rejects_strangers_data():
    assert parse_button(button_data("q_abc123", 3)) == ("q_abc123", 3)
    for data in ("", "clarify:q_abc:0", "clarify:q_abc:5", "other:q:1", "clarify:a b:1"):
        assert parse_button(data) is None
    assert len(button_data("q_" + "f" * 21, 4).encode()) <= 64  # Telegram's callback_data cap


def test_only_the_person_asked_may_press_an_open_question(store, settings, clock):
    asked = question(store)
    assert can_press(store, settings, asked, 2)
    assert not can_press(store, settings, asked, 3)  # no third choice
    assert not can_press(store, settings, asked, 1, account="telegram:999")
    assert not can_press(store, settings, asked, 1, user_id="u2")
    newer = question(store, "Milk?", ("Yes", "No"))
    assert not can_press(store, settings, asked)  # superseded
    assert can_press(store, settings, newer)
    clock.set(START.timestamp() + settings.clarify_hours * 3600 + 1)
    assert not can_press(store, settings, newer)  # expired


def test_typed_answers_are_read_as_the_choice_and_close_the_question(store, settings):
    question(store)
    assert settle(store, settings, entry(1, " large. "), " large. ").text == (
        '[answer to "Which size?"] 2. Large')
    assert settle(store, settings, entry(2, "2"), "2").text == "2"  # closed by entry 1
    # a retried turn of entry 1 reads the same answer again
    assert settle(store, settings, entry(1, "large"), "large").text.endswith("2. Large")


def test_commands_leave_the_question_open_and_other_words_close_it(store, settings):
    asked = question(store)
    assert settle(store, settings, entry(1, "/status"), "/status").text == "/status"
    assert can_press(store, settings, asked)
    assert settle(store, settings, entry(2, "never mind"), "never mind").text == "never mind"
    assert not can_press(store, settings, asked)


def test_a_press_for_a_closed_question_is_stale(store, settings):
    asked = question(store)
    settle(store, settings, entry(1, "1"), "1")
    pressed = entry(2, "2", clarify=asked.id, choice=2)
    assert settle(store, settings, pressed, "2").stale
    fresh = question(store, "Milk?", ("Yes", "No"))
    wrong = entry(3, "1", clarify=asked.id, choice=1)
    assert settle(store, settings, wrong, "1").stale  # pressed on the older question
    right = entry(4, "1", clarify=fresh.id, choice=1)
    assert settle(store, settings, right, "1").text == '[answer to "Milk?"] 1. Yes'


def test_asking_again_closes_the_chats_older_open_questions_for_the_asking_entry(store):
    older = question(store)
    other_chat = ask(store, user_id="u1", session_id="s1", chat_key="telegram:7", account="a",
                     question="Elsewhere?", choices=("Yes", "No"))
    someone_else = ask(store, user_id="u2", session_id="s2", chat_key=CHAT, account="b",
                       question="Theirs?", choices=("Yes", "No"))
    newer = ask(store, user_id="u1", session_id="s1", chat_key=CHAT, account="telegram:4242",
                question="Milk?", choices=("Yes", "No"), inbox_id=9)
    assert [q.id for q in store.clarifications.closed_by("u1", CHAT, 9)] == [older.id]
    assert store.clarifications.get("u1", newer.id).closed_by is None
    assert store.clarifications.get("u1", other_chat.id).closed_by is None
    assert store.clarifications.get("u2", someone_else.id).closed_by is None
