"""Strangers flooding the pairing slots over the Telegram webhook: a new request expires the
oldest pending one instead of being refused, and the owner hears about it in their own chat at
most once an hour (measured on the store's clock)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from core.clock import ManualClock
from core.identity.pairing import MAX_PENDING_PER_PLATFORM, Pairing
from core.identity.pairing_notice import NOTICE_SECONDS
from iris_testing.platform_stack import platform_stack
from tests.clocks import NOW

OWNER = 42
STRANGERS = iter(range(1000, 2000))


@pytest.fixture
def stack(iris_home):
    with platform_stack(iris_home, clock=ManualClock(NOW), IRIS_TELEGRAM_ACCESS="pairing",
                        IRIS_OWNER_ACCOUNTS=f"telegram:{OWNER}") as running:
        yield running


def texts(stack, chat_id):
    return [m["text"] for m in stack.telegram.sent_messages(chat_id)]


def say(stack, user_id, text="hello"):
    before = len(texts(stack, user_id))
    response = stack.telegram_post(stack.telegram.make_update(text, user_id=user_id))
    assert response.status_code == 200, response.text
    stack.wait(lambda: len(texts(stack, user_id)) > before)
    return texts(stack, user_id)[-1]


def stranger_asks(stack):
    who = next(STRANGERS)
    answer = say(stack, who)
    assert "Your pairing code is" in answer, answer
    return who


def notices(stack):
    return [t for t in texts(stack, OWNER) if "Pairing requests on telegram are being dropped"
            in t]


def code_of(stack, who):
    found = Pairing(stack.rt.store).pending_for(f"telegram:{who}")
    return found.code if found else None


def test_a_full_platform_drops_the_oldest_request_and_tells_the_owner_once_an_hour(stack):
    clock = stack.rt.store.clock
    assert say(stack, OWNER, "hi") == "re: hi"  # the owner has a chat Iris can write to

    clock.set(NOW + timedelta(minutes=30))
    waiting = [stranger_asks(stack) for _ in range(MAX_PENDING_PER_PLATFORM)]
    first_code = code_of(stack, waiting[0])
    assert notices(stack) == []

    newcomer = stranger_asks(stack)  # the slots are full: not refused
    assert code_of(stack, newcomer) is not None
    assert code_of(stack, waiting[0]) is None
    assert Pairing(stack.rt.store).get(first_code).status == "dropped"
    assert len(Pairing(stack.rt.store).list()) == MAX_PENDING_PER_PLATFORM
    stack.wait(lambda: notices(stack))
    (notice,) = notices(stack)
    assert f"telegram:{waiting[0]}" in notice and first_code in notice

    stranger_asks(stack)  # a second drop within the hour: no second notice
    assert code_of(stack, waiting[1]) is None
    refused = say(stack, OWNER, f"/approve {first_code}")
    assert "was dropped to make room" in refused
    assert len(notices(stack)) == 1

    # the next clock hour, but only 40 minutes after the notice: still quiet
    clock.set(NOW + timedelta(minutes=70))
    stranger_asks(stack)
    assert code_of(stack, waiting[2]) is None
    assert len(notices(stack)) == 1

    # over an hour after the notice: the earlier codes have expired; fill the slots again
    clock.set(NOW + timedelta(minutes=30) + timedelta(seconds=NOTICE_SECONDS + 300))
    while len(Pairing(stack.rt.store).list()) < MAX_PENDING_PER_PLATFORM:
        stranger_asks(stack)
    assert len(notices(stack)) == 1
    stranger_asks(stack)
    stack.wait(lambda: len(notices(stack)) == 2)

    # a dropped stranger who writes again simply gets a fresh code
    again = say(stack, waiting[0])
    assert "Your pairing code is" in again and first_code not in again
    assert say(stack, OWNER, f"/approve {code_of(stack, waiting[0])}").startswith("Approved")
    assert say(stack, waiting[0], "hi again") == "re: hi again"
