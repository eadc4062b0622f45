"""A tool call printed as text never reaches a stream, however the text is cut into deltas; what
is streamed ends up, white space aside, as the stored answer (strip_tool_syntax)."""

import random

import pytest

from core.model.answer_text import strip_tool_syntax
from core.model.printed_calls import PrintedCallFilter
from core.model.streaming import FeedEvent, StreamedText


class Sink:
    def __init__(self):
        self.events: list[FeedEvent] = []

    def text(self, delta):
        self.events.append(FeedEvent("text", delta))

    def reset(self):
        self.events.append(FeedEvent("reset"))

    @property
    def shown(self):
        return "".join(e.text for e in self.events)


CALL = '{"name": "memory", "arguments": {"action": "add", "text": "metric"}}'
ANSWERS = [
    "Plain words.\nOn two lines, with {braces} and [brackets] inside.",
    f"Noted.\n{CALL}",
    f"<tool_call>\n{CALL}\n</tool_call>\nI saved it.",
    f"Sure.\n<tool_call>{CALL}</tool_call>\nDone.",
    f"functions.memory:\n{CALL}\nThat is all.",
    f"Here is code:\n```json\n{CALL}\n```\nKeep that fenced one.",
    '[1] A reference list\n[2] that is not JSON at all\n\nThen more words.',
    '{"a": 1}\nA JSON object that is not a call stays.',
    f"Two calls.\n[{CALL}, {CALL}]\nAfter them.",
    "functions.are fun: a sentence, not a call.\nNext line.",
    f"Calling <tool_call>{CALL}</tool_call> inline.",
    "<tool_call>" + CALL,  # cut off: never closed
]


def chunked(text, rng):
    cuts = sorted(rng.sample(range(1, len(text)), k=min(len(text) - 1, rng.randint(1, 12))))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


def stream(pieces):
    sink = Sink()
    shown = PrintedCallFilter(sink)
    for piece in pieces:
        shown.text(piece)
    shown.finish()
    return sink


@pytest.mark.parametrize("answer", ANSWERS)
def test_no_printed_call_is_streamed_and_the_stream_completes_to_the_answer(answer):
    reply, _ = strip_tool_syntax(answer)
    rng = random.Random(answer)
    for pieces in [[answer], list(answer), *(chunked(answer, rng) for _ in range(30))]:
        sink = stream(pieces)
        if '"name": "memory"' not in reply:  # a fenced call is the answer's own text
            assert '"name"' not in sink.shown and "<tool_call>" not in sink.shown, pieces
        sent = StreamedText()
        for event in sink.events:
            sent.add(event)
        rest = sent.rest(reply)
        assert "".join(sink.shown.split()) + "".join(rest.split()) == "".join(reply.split())
        assert rest == "" or not sink.shown, (pieces, sink.shown, rest)


def test_ordinary_text_is_passed_on_at_once():
    sink = Sink()
    shown = PrintedCallFilter(sink)
    shown.text("Hello there, ")
    assert sink.shown == "Hello there, "
    shown.text("friend.\nNext")
    assert sink.shown == "Hello there, friend.\nNext"


def test_a_line_that_may_begin_a_call_waits_until_it_is_known():
    sink = Sink()
    shown = PrintedCallFilter(sink)
    shown.text('Noted.\n{"name": "memory", "argu')
    assert sink.shown == "Noted.\n"
    shown.text('ments": {}}\n')
    assert sink.shown == "Noted.\n"  # it was a call: dropped
    shown.text("Bye.")
    assert sink.shown == "Noted.\nBye."


def test_a_reset_drops_what_was_held():
    sink = Sink()
    shown = PrintedCallFilter(sink)
    shown.text("Let me check.\n{")
    shown.reset()
    shown.text("Fine.")
    shown.finish()
    assert [e.kind for e in sink.events] == ["text", "reset", "text"]
    assert sink.events[-1].text == "Fine."
