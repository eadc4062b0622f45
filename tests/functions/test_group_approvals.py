"""Held commands in a group chat, through the Telegram webhook: only the member whose turn held
the command (or an owner) may approve or deny it."""

import json

import pytest

from iris_testing.platform_stack import platform_stack
from iris_testing.scripted_model import ScriptedModel, call, tool_calls

pytestmark = pytest.mark.process  # its tools run shells or processes

GROUP = -1001000000001
ADA, BO, OWNER = 4242, 77, 9001


@pytest.fixture
def model():
    return ScriptedModel()


@pytest.fixture
def stack(iris_home, model):
    env = {
        "IRIS_GROUP_REPLY_MODE": "all",
        "IRIS_DANGEROUS_COMMAND_PATTERNS": json.dumps([r"touch\s+marker"]),
        "IRIS_OWNER_ACCOUNTS": f"telegram:{OWNER}",
    }
    with platform_stack(iris_home, model=model, **env) as running:
        yield running


def texts(stack):
    return [m["text"] for m in stack.telegram.sent_messages(GROUP)]


def say(stack, text, user_id, name):
    update = stack.telegram.make_update(text, chat_type="supergroup", user_id=user_id,
                                        first_name=name, username=name.lower())
    assert stack.telegram_post(update).status_code == 200


def marker(stack):
    scope = stack.rt.store.users.resolve(f"telegram:group:{GROUP}")
    return stack.rt.settings.home / "workspaces" / scope / "marker"


def hold_one(stack, model):
    model.then(tool_calls(call("terminal", command="touch marker")),
               "That needs your approval: /approve 1")
    say(stack, "please make the marker file", ADA, "Ada")
    stack.wait(lambda: len(texts(stack)) == 1)
    (held,) = stack.rt.store.held.pending(
        stack.rt.store.users.resolve(f"telegram:group:{GROUP}"))
    assert held.requested_by == f"telegram:{ADA}"


def test_another_member_cannot_approve_or_deny_what_one_asked_for(stack, model):
    hold_one(stack, model)
    say(stack, "/approve 1", BO, "Bo")
    say(stack, "/approve deny 1", BO, "Bo")
    stack.wait(lambda: len(texts(stack)) == 3)
    assert all("only they or an owner" in text for text in texts(stack)[1:])
    assert not marker(stack).exists()

    model.then("Made it.")
    say(stack, "/approve 1", ADA, "Ada")
    stack.wait(lambda: len(texts(stack)) == 4)
    assert marker(stack).exists()
    assert len(model.requests) == 3  # the held turn (2 calls) and the approval's continuation


def test_an_owner_may_approve_a_members_held_command(stack, model):
    hold_one(stack, model)
    model.then("Made it.")
    say(stack, "/approve 1", OWNER, "Olga")
    stack.wait(lambda: len(texts(stack)) == 2)
    assert marker(stack).exists()
