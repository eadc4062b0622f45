import asyncio

import pytest

from core.clock import ManualClock
from core.commands import CommandContext
from core.commands.held import approve_pending
from tests.clocks import NOW
from tests.core.acting.support import call, make_ctx

pytestmark = pytest.mark.process  # its tools run shells or processes

PATTERN = {"dangerous_command_patterns": [r"touch\s+marker"]}


@pytest.fixture
def clock():
    return ManualClock(NOW)


@pytest.fixture
def alice(store, settings):
    return make_ctx(store, settings.model_copy(update=PATTERN))


@pytest.fixture
def workspace(alice, iris_home):
    return iris_home / "workspaces" / alice.user_id


def command_ctx(tool_ctx, platform="http"):
    store = tool_ctx.store
    return CommandContext(
        store=store, settings=tool_ctx.settings, services=tool_ctx.services,
        user_id=tool_ctx.user_id, account=tool_ctx.account, chat_key=tool_ctx.chat_key,
        platform=platform, session=store.sessions.get(tool_ctx.user_id, tool_ctx.session_id),
    )


def approve(ctx, arg, platform="http"):
    return asyncio.run(approve_pending(command_ctx(ctx, platform), arg))


def test_approve_runs_the_held_command_once_and_continues_the_turn(alice, workspace):
    assert "held as #1" in call(alice, "terminal", command="touch marker-1 && echo made it")
    assert not (workspace / "marker-1").exists()

    result = approve(alice, "1")
    assert (workspace / "marker-1").exists()
    assert result.continue_with == "/approve 1"
    assert "approved held command #1 (`touch marker-1 && echo made it`)" in result.extra_context
    assert "exit code 0" in result.extra_context and "made it" in result.extra_context
    assert '<untrusted source="terminal">' in result.extra_context
    held = alice.store.held.get(alice.user_id, 1)
    assert (held.status, held.exit_code) == ("done", 0)

    (workspace / "marker-1").unlink()
    again = approve(alice, "1")
    assert again.reply == "Held command #1 was already done."
    assert not (workspace / "marker-1").exists()


def test_bare_approve_runs_the_only_one_or_lists_several(alice, workspace):
    assert approve(alice, "") is None
    call(alice, "terminal", command="touch marker-a")
    assert approve(alice, "").continue_with == "/approve 1"
    call(alice, "terminal", command="touch marker-b")
    call(alice, "terminal", command="touch marker-c", workdir="sub")
    listing = approve(alice, "").reply
    assert "#2: `touch marker-b`" in listing and "#3: `touch marker-c` in sub" in listing
    assert "/approve N" in listing
    assert approve(alice, "list").reply == listing
    assert not (workspace / "marker-b").exists()


def test_deny_drops_it(alice, workspace):
    call(alice, "terminal", command="touch marker-d")
    assert approve(alice, "deny 1").reply == "Dropped held command #1; it will not run."
    assert approve(alice, "#1").reply == "Held command #1 was already denied."
    assert approve(alice, "deny 7").reply == "There is no held command #7."
    assert not (workspace / "marker-d").exists()


def test_expired_commands_cannot_be_approved(alice, workspace):
    call(alice, "terminal", command="touch marker-e")
    alice.store.clock.advance(alice.settings.approval_minutes * 60 + 1)
    assert approve(alice, "1").reply == (
        "Held command #1 expired; ask me again if it is still needed."
    )
    assert approve(alice, "") is None
    assert not (workspace / "marker-e").exists()


def test_another_user_cannot_approve_it(store, alice, workspace):
    call(alice, "terminal", command="touch marker-f")
    bob = make_ctx(store, alice.settings, "http:bob")
    assert approve(bob, "1").reply == "There is no held command #1."
    assert approve(bob, "") is None
    assert not (workspace / "marker-f").exists()
    assert store.held.get(alice.user_id, 1).status == "pending"


def test_a_cron_job_cannot_approve(alice, workspace):
    call(alice, "terminal", command="touch marker-g")
    assert "only be approved by a person" in approve(alice, "1", platform="cron").reply
    assert alice.store.held.get(alice.user_id, 1).status == "pending"
    assert not (workspace / "marker-g").exists()


@pytest.mark.parametrize("arg", ["K7PQ2XMA", "1 2", "deny", "please"])
def test_other_arguments_are_left_to_the_caller(alice, arg):
    call(alice, "terminal", command="touch marker-h")
    assert approve(alice, arg) is None
    assert alice.store.held.get(alice.user_id, 1).status == "pending"


def test_numbers_are_per_user(store, alice):
    bob = make_ctx(store, alice.settings, "http:bob")
    assert "held as #1" in call(alice, "terminal", command="touch marker-1")
    assert "held as #1" in call(bob, "terminal", command="touch marker-1")
    assert "held as #2" in call(alice, "terminal", command="touch marker-2")
