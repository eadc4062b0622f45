"""Matrix group rooms over real HTTP: a room of more than two members (counted through the fake
homeserver's ``joined_members`` after Iris joins, or when someone joins) is a group; there Iris
reads only messages addressed to it, the room owns the data and each speaker is recorded."""

import pytest

from core.platforms.matrix_inbound import MxContent, addressed
from functions.matrix import is_group_room
from iris_testing.matrix_api import BOT, PERSON
from iris_testing.platform_stack import platform_stack
from tests.functions.test_matrix import put

GROUP = "!team:example.org"
BOB = "@bob:example.org"
CAROL = "@carol:example.org"


@pytest.fixture
def stack(iris_home):
    with platform_stack(iris_home) as running:
        yield running


def joined_as_group(stack, room=GROUP, *members):
    stack.matrix.set_members(room, *(members or (PERSON, BOB)))
    put(stack, stack.matrix.invite_event(room), txn="invite")
    stack.wait(lambda: is_group_room(stack.rt, room), "the room to be counted as a group")


def inbox(stack, room=GROUP):
    owner = stack.rt.store.users.resolve(f"matrix:group:{room}")
    return stack.rt.store.inbox.latest_messages(owner, limit=10)


def test_in_a_group_room_only_mentions_are_answered_and_the_room_owns_its_data(stack):
    joined_as_group(stack)
    chatter = stack.matrix.message_event("lunch at noon?", room=GROUP)
    asked = stack.matrix.message_event(
        "what's the capital of Peru?", room=GROUP, sender=BOB, mentions=[BOT]
    )
    assert put(stack, chatter, asked, txn="t2").status_code == 200
    stack.wait(lambda: stack.matrix.sent(GROUP) and stack.settled())
    assert stack.matrix.sent(GROUP) == ["re: what's the capital of Peru?"]
    assert stack.model.seen == ["what's the capital of Peru?"]
    (entry,) = inbox(stack)
    assert (entry.account, entry.is_group, entry.chat_id) == (f"matrix:{BOB}", True, GROUP)
    bob = stack.rt.store.users.for_account(f"matrix:{BOB}")
    assert stack.rt.store.inbox.latest_messages(bob, limit=5) == []  # nothing in Bob's own


def test_a_name_or_the_user_id_in_the_body_or_a_command_addresses_iris(stack):
    joined_as_group(stack)
    events = [
        stack.matrix.message_event(text, room=GROUP)
        for text in (
            "the irises are out",
            "Iris, what time is it?",
            f"{BOT} say hi",
            "/help",
            "ask @iris:example.org.evil later",
        )
    ]
    put(stack, *events, txn="t2")
    stack.wait(lambda: len(stack.matrix.sent(GROUP)) == 3 and stack.settled())
    assert sorted(stack.model.seen) == sorted(["Iris, what time is it?", f"{BOT} say hi"])
    assert sorted(e.text for e in inbox(stack)) == sorted(
        ["Iris, what time is it?", f"{BOT} say hi", "/help"]
    )


def test_a_direct_room_is_answered_until_a_third_member_joins(stack):
    room = "!dm2:example.org"
    stack.matrix.set_members(room, PERSON)
    put(stack, stack.matrix.invite_event(room), txn="invite")
    stack.wait(lambda: stack.matrix.joined == [room])
    put(stack, stack.matrix.message_event("hello there", room=room), txn="t2")
    stack.wait(lambda: stack.matrix.sent(room))
    assert not is_group_room(stack.rt, room)
    stack.matrix.set_members(room, PERSON, BOT, CAROL)
    put(stack, stack.matrix.member_event(room, CAROL), txn="t3")
    stack.wait(lambda: is_group_room(stack.rt, room), "the grown room to be a group")
    put(stack, stack.matrix.message_event("not for the bot", room=room), txn="t4")
    put(stack, stack.matrix.message_event("hi", room=room, mentions=[BOT]), txn="t5")
    stack.wait(lambda: len(stack.matrix.sent(room)) == 2 and stack.settled())
    assert stack.matrix.sent(room) == ["re: hello there", "re: hi"]
    assert "not for the bot" not in stack.model.seen


def test_with_group_reply_mode_all_every_message_is_read(iris_home):
    with platform_stack(iris_home, IRIS_GROUP_REPLY_MODE="all") as s:
        joined_as_group(s)
        put(s, s.matrix.message_event("lunch at noon?", room=GROUP), txn="t2")
        s.wait(lambda: s.matrix.sent(GROUP))
        assert s.matrix.sent(GROUP) == ["re: lunch at noon?"]


def test_mentions_follow_m_mentions_the_pill_and_the_names():
    def content(body, **extra):
        return MxContent.model_validate({"msgtype": "m.text", "body": body, **extra})

    names = ("iris", "Helper Bot")
    assert addressed(content("hi", **{"m.mentions": {"user_ids": [BOT]}}), BOT, names)
    assert not addressed(content("hi", **{"m.mentions": {"user_ids": [BOB]}}), BOT, names)
    pill = f'<a href="https://matrix.to/#/{BOT}">Iris</a>: hi'
    assert addressed(content("I: hi", formatted_body=pill), BOT, names)
    assert addressed(content("hey helper bot, help"), BOT, names)
    assert not addressed(content("a helper botanist"), BOT, names)
    assert addressed(content("@Iris hello"), BOT, names)
    assert addressed(content("Iris: hello"), BOT, names)
    assert not addressed(content("@iris:elsewhere.example hello"), BOT, names)
    assert not addressed(content("irisdescent"), BOT, names)
    assert not addressed(content(f"ask {BOT}.evil"), BOT, names)
