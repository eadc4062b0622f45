"""Over real HTTP through litellm to the scripted model server: the answer-length cap reaches the
model as max_tokens, a cut-off answer ends cleanly with a note, and tool calls a model prints as
text are never shown raw nor run."""

import pytest

from core.turn.loop import PLAIN_WORDS, PRINTED_CALL_ONLY
from iris_testing.llm_server import ScriptedLLM
from tests.fakes.stack import emulator_stack


@pytest.fixture
def llm():
    return ScriptedLLM()


def ask(client, text):
    answer = client.chat.completions.create(
        model="iris", messages=[{"role": "user", "content": text}], user="alice")
    return answer.choices[0].message.content


def test_the_cap_is_sent_and_a_cut_answer_ends_cleanly(llm, monkeypatch):
    llm.reply("Tea is easy. Boil water, then pour it over the lea", finish_reason="length")
    llm.reply("Green tea likes cooler water.")
    with emulator_stack(llm, monkeypatch, IRIS_MAX_OUTPUT_TOKENS=40) as stack:
        first = ask(stack.client, "how do I make tea?")
        assert first == ("Tea is easy.\n\n(The answer was cut short at 40 tokens; set "
                         "IRIS_MAX_OUTPUT_TOKENS higher for longer answers.)")
        ask(stack.client, "and green tea?")
    assert [r["max_tokens"] for r in llm.requests] == [40, 40]
    # the history the model reads next holds the clean answer, not the note
    assert llm.requests[1]["messages"][-2] == {"role": "assistant", "content": "Tea is easy."}


def test_no_cap_is_sent_unless_configured(llm, monkeypatch):
    llm.reply("Hello.")
    with emulator_stack(llm, monkeypatch) as stack:
        assert ask(stack.client, "hi") == "Hello."
    assert "max_tokens" not in llm.requests[0]


def test_a_tool_call_printed_as_text_is_asked_again_in_words(llm, monkeypatch):
    llm.reply('<tool_call>\n{"name": "clock", "arguments": {"timezone": "Asia/Tokyo"}}\n'
              "</tool_call>")
    llm.reply("I cannot see a clock, but Tokyo is nine hours ahead of UTC.")
    with emulator_stack(llm, monkeypatch) as stack:
        answer = ask(stack.client, "what time is it in Tokyo?")
    assert answer == "I cannot see a clock, but Tokyo is nine hours ahead of UTC."
    first, second = llm.requests
    assert first.get("tools") and not second.get("tools")
    assert second["messages"][-1] == {"role": "user", "content": PLAIN_WORDS.content}
    assert all(m["role"] != "tool" for m in second["messages"])  # nothing ran


def test_words_around_a_printed_call_are_kept(llm, monkeypatch):
    llm.reply('Noted.\n{"name": "memory", "arguments": {"action": "add", "text": "metric"}}')
    with emulator_stack(llm, monkeypatch) as stack:
        assert ask(stack.client, "Remember that I prefer metric units") == "Noted."
    assert len(llm.requests) == 1


def test_a_model_that_only_prints_calls_gets_a_plain_notice(llm, monkeypatch):
    llm.reply("functions.session_info:\n{ }").reply('{"name": "clock", "arguments": {}}')
    llm.reply("Hello again.")
    with emulator_stack(llm, monkeypatch) as stack:
        assert ask(stack.client, "hello") == PRINTED_CALL_ONLY
        assert ask(stack.client, "hello?") == "Hello again."
    history = llm.requests[2]["messages"]
    assert {"role": "assistant", "content": PRINTED_CALL_ONLY} in history
    assert not any("functions." in str(m.get("content")) for m in history)
