"""A 64 KB reply of adversarial markup from the model to a Telegram user, through the webhook,
the turn, the delivery and python-telegram-bot to the fake Bot API, while a task in Iris' event
loop ticks every 2 ms: the loop keeps ticking while the reply is formatted (in the formatting
pool's thread) and never stalls for a sizeable share of the time the delivery took."""

import asyncio
import contextlib
import logging
import threading
from itertools import pairwise

from core.messages import Message
from iris_testing.platform_stack import platform_stack
from iris_testing.waiting import WaitTimeout, wait_until

REPLY = "![" * 32768  # 64 KB: the quadratic splitter took minutes on it


class FormatMarks(logging.Handler):
    """When the formatter starts and ends (``core.platforms.offload``'s debug lines): how many
    loop ticks had been seen then, and in which thread."""

    def __init__(self, ticks):
        super().__init__(logging.DEBUG)
        self.ticks, self.seen = ticks, {}

    def emit(self, record):
        if record.getMessage().endswith(f"{len(REPLY)} characters off the loop"):
            # the formatter holds here until the loop has ticked: a positive sign that the loop
            # runs while the formatting is in progress (on a busy machine the formatting alone
            # may finish within one tick); formatting on the loop would block the ticks and fail
            start = len(self.ticks)
            with contextlib.suppress(WaitTimeout):
                wait_until(lambda: len(self.ticks) > start, "a loop tick during the formatting",
                           timeout=30)
            self.seen["start"] = (start, record.threadName)
        elif record.getMessage() == f"formatted {len(REPLY)} characters":
            self.seen["end"] = (len(self.ticks), record.threadName)


def test_a_64_kb_adversarial_reply_is_formatted_while_the_loop_keeps_ticking(iris_home):
    ticks, loop_thread, tasks = [], [], []

    async def tick():
        loop = asyncio.get_running_loop()
        while True:
            ticks.append(loop.time())
            await asyncio.sleep(0.002)

    def answer(messages):  # the model call, in Iris' event loop
        loop_thread.append(threading.current_thread().name)
        tasks.append(asyncio.get_running_loop().create_task(tick()))
        return Message(role="assistant", content=REPLY)

    marks = FormatMarks(ticks)
    logger = logging.getLogger("iris.format")
    level = logger.level
    logger.addHandler(marks)
    logger.setLevel(logging.DEBUG)
    try:
        with platform_stack(iris_home) as stack:
            stack.model.before = answer
            assert stack.telegram_post(stack.telegram.make_update("read this")).status_code == 200

            def delivered():
                return "".join(m["text"] for m in stack.telegram.sent_messages(4242)) == REPLY

            wait_until(delivered, "the whole reply at the fake Bot API", timeout=100,
                       seen=lambda: len(stack.telegram.sent_messages(4242)))
            parts = stack.telegram.sent_messages(4242)
            task = tasks[0]
            task.get_loop().call_soon_threadsafe(task.cancel)
    finally:
        logger.removeHandler(marks)
        logger.setLevel(level)

    gaps = [b - a for a, b in pairwise(ticks)]
    window = ticks[-1] - ticks[0]
    print(f"longest loop stall {max(gaps) * 1000:.1f} ms in {window * 1000:.0f} ms")
    assert max(gaps) < window / 2, "the loop stalled for most of the delivery"
    assert len(parts) == 16 and all(len(p["text"]) <= 4096 for p in parts)
    assert set(marks.seen) == {"start", "end"}, "the reply was not formatted off the loop"
    (ticks_before, formatter), (ticks_after, _) = marks.seen["start"], marks.seen["end"]
    assert formatter.startswith("iris-format") and formatter != loop_thread[0]
    assert ticks_after - ticks_before > 0, "the loop did not tick while the reply was formatted"
