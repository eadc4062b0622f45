"""Formatting time grows in proportion to the reply on every platform, whatever markup the
reply is made of: the senders' own ``parts`` (render and split) and the email's HTML part, on
replies of 8 KB and 64 KB that repeat a piece of unclosed or nested markup.

No clock is read as an absolute: the same test formats eight 8 KB replies and one 64 KB reply
(the same amount of text) and compares the two CPU times, the least of a few rounds each. The
quadratic formatter took 8x to 30x longer on the 64 KB reply; a linear one takes about as long.
"""

import gc
import time

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from core.platforms.discord import DiscordSender
from core.platforms.mail import EmailSender, SmtpServer
from core.platforms.slack import SlackSender
from core.platforms.telegram import TelegramSender
from core.platforms.whatsapp import WhatsAppSender

SMALL, LARGE = 8 * 1024, 64 * 1024
ROUNDS = 3
MOST = 2.5  # 8x the text may take 20x the time (noise, caches), not more

_mail = EmailSender(SmtpServer("127.0.0.1", 25, implicit_tls=False), "iris@iris.example.net")
PLATFORMS = {
    "telegram": TelegramSender("7000001:t").parts,
    "slack": SlackSender("xoxb-t").parts,
    "whatsapp": WhatsAppSender("t", "100").parts,
    "discord": DiscordSender("t", "1").parts,
    "email": lambda text: _mail.compose({"to": "ada@example.com"}, text).as_bytes(),
}
PIECES = ["![", "[", "]", "(", "*", "_", "**", "__", "~~", "`", "``", "<", ">", "&", "#", " ",
          "\t", "a", "](http://x", "<@U1", "> ", "- ", "```", "\n"]
piece = st.lists(st.sampled_from(PIECES), min_size=1, max_size=4).map("".join)
ends = st.sampled_from(["", "#", "```", "x", "!", "> "])


def reply(shape, size):
    """``head``, ``first`` repeated, ``second`` repeated (half the size each), ``tail``."""
    head, first, second, tail = shape
    half = (size - len(head) - len(tail)) // 2
    body = (first * (half // len(first) + 1))[:half]
    rest = size - len(head) - len(tail) - half
    return head + body + (second * (rest // len(second) + 1))[:rest] + tail


def cpu_seconds(format_, texts):
    gc.collect()
    started = time.thread_time()
    for text in texts:
        format_(text)
    return time.thread_time() - started


def growth(format_, shape):
    """CPU time of one 64 KB reply over that of eight 8 KB replies (least of ROUNDS each)."""
    small, large = [reply(shape, SMALL)] * (LARGE // SMALL), [reply(shape, LARGE)]
    eights, ones = [], []
    for _ in range(ROUNDS):
        eights.append(cpu_seconds(format_, small))
        ones.append(cpu_seconds(format_, large))
    return min(ones) / max(min(eights), 1e-6)


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
@settings(max_examples=1, deadline=None, derandomize=True)
@given(shape=st.tuples(ends, piece, piece, ends))
@example(shape=("", "![", "![", ""))
@example(shape=("", "[[[(", "[[[(", ""))
@example(shape=("", "*_", "*_", ""))
@example(shape=("", "``a`", "``a`", ""))
@example(shape=("```", " ", " ", "!"))  # a fence line that never ends
@example(shape=("#", " \t", "#", "x"))  # a heading whose end is never found
def test_formatting_time_grows_linearly_with_adversarial_markup(platform, shape):
    ratio = growth(PLATFORMS[platform], shape)
    assert ratio < MOST, f"{platform}: 8x of {shape!r} took {ratio * 8:.1f}x the time"
