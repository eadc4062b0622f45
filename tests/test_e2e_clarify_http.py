"""``clarify`` over the HTTP API (openai client → emulator → litellm → the scripted model): the
question comes back as the answer with its choices numbered, and typing a number answers it;
the model sees which choice was made. A message that is not a choice closes the question too."""

from __future__ import annotations

import pytest

from iris_testing.llm_server import ScriptedLLM
from tests.fakes.stack import emulator_stack


@pytest.fixture
def stack(monkeypatch):
    llm = ScriptedLLM()
    with emulator_stack(llm, monkeypatch, IRIS_SESSION_TITLES="false",
                        IRIS_MEMORY_REVIEW_EVERY="0",
                        IRIS_MEMORY_REVIEW_AT_SESSION_END="false") as running:
        yield llm, running.client, running.runtime


def ask(client, text: str) -> str:
    answer = client.chat.completions.create(
        model="iris", messages=[{"role": "user", "content": text}], user="alice")
    return answer.choices[0].message.content


def last_user(llm) -> str:
    return llm.requests[-1]["messages"][-1]["content"]


def test_a_typed_number_answers_the_question(stack):
    llm, client, _ = stack
    llm.tool_call("clarify", {"question": "Which file format?",
                              "choices": ["CSV", "JSON", "Parquet"]})
    question = ask(client, "export my notes")
    assert question.startswith("Which file format?")
    assert "1. CSV\n2. JSON\n3. Parquet" in question
    assert len(llm.requests) == 1  # asking ended the turn: no further model call

    llm.reply("Exporting as JSON.")
    assert ask(client, "2") == "Exporting as JSON."
    assert last_user(llm) == '[answer to "Which file format?"] 2. JSON'
    history = [m["role"] for m in llm.requests[-1]["messages"]]
    assert history[-4:] == ["assistant", "tool", "assistant", "user"]

    llm.reply("Sure.")
    ask(client, "2")  # the question was answered: "2" is just "2" now
    assert last_user(llm) == "2"


def test_the_choice_text_answers_and_other_words_close_the_question(stack):
    llm, client, _ = stack
    llm.tool_call("clarify", {"question": "Tea or coffee?", "choices": ["Tea", "Coffee"]})
    ask(client, "make me a drink")
    llm.reply("Coffee coming.")
    ask(client, "coffee")
    assert last_user(llm) == '[answer to "Tea or coffee?"] 2. Coffee'

    llm.tool_call("clarify", {"question": "Milk?", "choices": ["Yes", "No"]})
    ask(client, "and another")
    llm.reply("Water then.")
    ask(client, "actually just water")
    assert last_user(llm) == "actually just water"
    llm.reply("ok")
    ask(client, "1")
    assert last_user(llm) == "1"


def test_duplicate_choices_go_back_to_the_model(stack):
    llm, client, _ = stack
    from core.contracts.asked import Asked

    assert Asked("q_1", "Sure?", ()).text() == "Sure?"
    llm.tool_call("clarify", {"question": "Which?", "choices": ["A", "A"]}).reply("ok")
    assert ask(client, "pick") == "ok"
    tool_result = llm.requests[-1]["messages"][-1]
    assert tool_result["role"] == "tool" and "own non-empty text" in tool_result["content"]
