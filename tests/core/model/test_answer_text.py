"""Tool-call syntax printed as text is taken out; a cut-off answer ends at a whole sentence."""

import pytest

from core.model.answer_text import cut_short_note, end_cleanly, strip_tool_syntax


@pytest.mark.parametrize(("text", "left"), [
    ("functions.session_info:\n{ }", ""),
    ("functions.memory:\n{\"action\": \"add\"}\nfunctions.clock:\n{}", ""),
    ('Sure! <tool_call>\n{"name": "clock", "arguments": {"timezone": "Asia/Tokyo"}}\n'
     "</tool_call>", "Sure!"),
    ('<tool_call>{"name": "clock", "argum', ""),  # cut off mid-call
    ("Hi.\n<tool_call>\n</tool_call>", "Hi."),
    ('{"name": "memory", "arguments": {"action": "add", "text": "metric"}}', ""),
    ('[{"name": "a", "parameters": {}}]\nThe time is noon.', "The time is noon."),
    ('{"type": "function", "function": {"name": "clock"}}\nDone.', "Done."),
    ('{"tool_calls": [{"id": "1"}]}', ""),
])
def test_printed_tool_calls_are_taken_out(text, left):
    assert strip_tool_syntax(text) == (left, True)


@pytest.mark.parametrize("text", [
    "Hello! How can I help?",
    'Plain {"a": 1} words and a JSON object: {"name": "Ada"}',
    'An example:\n```json\n{"name": "clock", "arguments": {}}\n```\nThat is the format.',
    "Models mark calls with <tool_call> tags.",  # a mention, not a call
])
def test_ordinary_answers_are_left_alone(text):
    assert strip_tool_syntax(text) == (text, False)


def test_a_cut_answer_ends_at_its_last_sentence():
    assert end_cleanly("Tea is easy. Boil water, then pour it over the lea") == "Tea is easy."
    assert end_cleanly('He said "go!" and then we') == 'He said "go!"'


def test_a_cut_answer_without_a_sentence_end_ends_at_a_word():
    assert end_cleanly("one two three fou") == "one two three…"


def test_a_cut_answer_inside_a_code_fence_closes_it():
    cut = "Run this:\n```sh\nmake run\nmake te"
    assert end_cleanly(cut) == "Run this:\n```sh\nmake run\nmake…\n```"


def test_the_note_names_the_setting():
    assert "IRIS_MAX_OUTPUT_TOKENS" in cut_short_note(128) and "128 tokens" in cut_short_note(128)
    assert "length limit" in cut_short_note(None)
