"""Formatting time grows in proportion to the reply on every platform, whatever markup the
reply is made of: the senders' own ``parts`` (render and split) and the email's HTML part, on
replies of 8 KB and 64 KB that repeat a piece of unclosed or nested markup.

No clock is read as an absolute: ``iris_testing.growth.assert_linear`` formats the 8 KB and the
64 KB reply alternately in the same test and compares the two CPU times (eight times the text may
cost at most 24 times the time; a quadratic formatter costs about 64 times). A passing shape is
measured once; only a ratio that looks too high is measured again, with more rounds.
"""

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from core.platforms.discord import DiscordSender
from core.platforms.mail import EmailSender, SmtpServer
from core.platforms.slack import SlackSender
from core.platforms.telegram import TelegramSender
from core.platforms.whatsapp import WhatsAppSender
from iris_testing.growth import assert_linear

SMALL, LARGE = 8 * 1024, 64 * 1024  # both split on Telegram, WhatsApp, Discord

_mail = EmailSender(SmtpServer("127.0.0.1", 25, implicit_tls=False), "iris@iris.example.net")
PLATFORMS = {
    "telegram": TelegramSender("7000001:t").parts,
    "slack": SlackSender("xoxb-t").parts,
    "whatsapp": WhatsAppSender("t", "100").parts,
    "discord": DiscordSender("t", "1").parts,
    "email": lambda text: _mail.compose({"to": "ada@example.com"}, text).as_bytes(),
}
PIECES = [
    "![",
    "[",
    "]",
    "(",
    "*",
    "_",
    "**",
    "__",
    "~~",
    "`",
    "``",
    "<",
    ">",
    "&",
    "#",
    " ",
    "\t",
    "a",
    "](http://x",
    "<@U1",
    "> ",
    "- ",
    "```",
    "\n",
]
piece = st.lists(st.sampled_from(PIECES), min_size=1, max_size=4).map("".join)
ends = st.sampled_from(["", "#", "```", "x", "!", "> "])


def reply(shape, size):
    """``head``, ``first`` repeated, ``second`` repeated (half the size each), ``tail``."""
    head, first, second, tail = shape
    half = (size - len(head) - len(tail)) // 2
    body = (first * (half // len(first) + 1))[:half]
    rest = size - len(head) - len(tail) - half
    return head + body + (second * (rest // len(second) + 1))[:rest] + tail


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
    assert_linear(
        PLATFORMS[platform],
        small=reply(shape, SMALL),
        large=reply(shape, LARGE),
        scale=LARGE / SMALL,
        what=f"{platform} formatting {shape!r}",
    )
