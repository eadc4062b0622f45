"""End-to-end encrypted Matrix rooms over real HTTP: Iris holds no Megolm keys, so it says where
it can read instead of staying silent — in a direct room for each encrypted message, in a group
room once (when it joins, or when someone turns encryption on) — and records nothing."""

import pytest

from core.platforms.matrix_inbound import ENCRYPTED_ROOM, MxEvent, parse_event
from iris_testing.matrix_api import BOT, PERSON, ROOM
from iris_testing.platform_stack import platform_stack
from tests.functions.test_matrix import count, put
from tests.functions.test_matrix_groups import BOB, GROUP, joined_as_group


@pytest.fixture
def stack(iris_home):
    with platform_stack(iris_home) as running:
        yield running


def test_an_encrypted_message_in_a_direct_room_is_answered_once_and_not_recorded(stack):
    body = stack.matrix.transaction(stack.matrix.encrypted_event())
    for _ in range(3):  # the homeserver sends the transaction again: one answer
        assert stack.matrix_put(body, txn="txn-enc").status_code == 200
    stack.wait(lambda: stack.matrix.sent(ROOM))
    stack.wait(stack.settled)
    assert stack.matrix.sent(ROOM) == [ENCRYPTED_ROOM]
    assert count(stack) == 0 and stack.model.seen == []
    put(stack, stack.matrix.message_event("and in plain text?"))  # the room can still be read
    stack.wait(lambda: "re: and in plain text?" in stack.matrix.sent(ROOM))


def test_joining_an_encrypted_group_room_tells_it_once_and_its_messages_are_not_answered(stack):
    stack.matrix.encrypt(GROUP)
    joined_as_group(stack, GROUP, PERSON, BOB)
    stack.wait(lambda: stack.matrix.sent(GROUP))
    for sender in (PERSON, BOB):
        put(stack, stack.matrix.encrypted_event(room=GROUP, sender=sender))
    put(stack, stack.matrix.invite_event(GROUP), txn="invited-again")
    stack.wait(lambda: stack.matrix.joined.count(GROUP) == 2)
    stack.wait(stack.settled)
    assert stack.matrix.sent(GROUP) == [ENCRYPTED_ROOM]  # the same send, deduplicated
    assert count(stack) == 0 and stack.model.seen == []


def test_joining_a_room_without_encryption_says_nothing(stack):
    room = "!plain:example.org"
    stack.matrix.set_members(room, PERSON)
    put(stack, stack.matrix.invite_event(room))
    stack.wait(lambda: room in stack.matrix.joined)
    put(stack, stack.matrix.message_event("hi", room=room))
    stack.wait(lambda: stack.matrix.sent(room))
    assert stack.matrix.sent(room) == ["re: hi"]


def test_encryption_turned_on_in_a_room_iris_is_in_is_answered_once(stack):
    body = stack.matrix.transaction(stack.matrix.encryption_event())
    for _ in range(2):
        assert stack.matrix_put(body, txn="txn-on").status_code == 200
    stack.wait(lambda: stack.matrix.sent(ROOM))
    stack.wait(stack.settled)
    assert stack.matrix.sent(ROOM) == [ENCRYPTED_ROOM] and count(stack) == 0


def test_what_is_not_answered():
    def parsed(**event):
        base = {"room_id": ROOM, "sender": PERSON, "event_id": "$e1", "content": {}}
        return parse_event(MxEvent.model_validate({**base, **event}), bot=BOT)

    assert parsed(type="m.room.encrypted", sender=BOT).message is None  # Iris' own
    assert parsed(type="m.room.encryption", state_key="other").message is None
    assert parsed(type="m.room.encryption", state_key="").reply == ENCRYPTED_ROOM
    group = parse_event(MxEvent.model_validate({
        "type": "m.room.encrypted", "room_id": GROUP, "sender": BOB, "event_id": "$e2",
        "content": {}}), bot=BOT, group=True)
    assert group.message is None and "group" in (group.reason or "")
