"""/v1/chat/completions with stream=true sends the answer as the model produces it: the
scripted model server holds its chunks behind a gate the test opens, and the client reads
the first words before the rest exist."""

import json

import httpx

from iris_testing.llm_server import Gate, ScriptedLLM
from tests.fakes.stack import API_KEY, emulator_stack

HEADERS = {"Authorization": f"Bearer {API_KEY}"}


def body(text, user="sam", **extra):
    return {"model": "iris", "messages": [{"role": "user", "content": text}], "user": user,
            "stream": True, **extra}


def deltas(lines):
    """Content deltas from SSE lines, until [DONE]."""
    for line in lines:
        if not line.startswith("data: "):
            continue
        data = line[6:]
        if data == "[DONE]":
            return
        parsed = json.loads(data)
        assert "error" not in parsed, parsed
        content = parsed["choices"][0]["delta"].get("content")
        if content:
            yield content


def test_the_first_words_arrive_before_the_model_has_finished(monkeypatch):
    llm = ScriptedLLM()
    gate = Gate()
    llm.reply("Tea is ready now.", gate=gate)
    gate.allow(2)  # the role chunk and "Tea "
    with emulator_stack(llm, monkeypatch) as stack, httpx.Client(
            base_url=stack.url, timeout=60) as client:
        with client.stream("POST", "/v1/chat/completions", json=body("tea?"),
                           headers={**HEADERS, "Idempotency-Key": "tea-1"}) as response:
            assert response.status_code == 200
            pieces = deltas(response.iter_lines())
            assert next(pieces) == "Tea "
            assert gate.sent == 2  # the model has not sent more: this is a partial answer
            entry = stack.runtime.store.db.scalar(
                "SELECT status FROM inbox WHERE platform_message_id = 'http:sam:tea-1'")
            assert entry == "pending"
            gate.open()
            assert "Tea " + "".join(pieces) == "Tea is ready now."
        # the stored answer is the whole one, and a retry with the key gets it whole
        again = stack.client.chat.completions.create(
            model="iris", messages=[{"role": "user", "content": "tea?"}], user="sam",
            extra_headers={"Idempotency-Key": "tea-1"})
        assert again.choices[0].message.content == "Tea is ready now."
        assert len(llm.requests) == 1
        assert len(stack.runtime.answers) == 0


def test_words_before_a_tool_call_stay_apart_from_the_answer(monkeypatch):
    llm = ScriptedLLM()
    llm.tool_call("memory", {"action": "add", "target": "user", "content": "Sam likes tea."},
                  text="Let me note that.")
    llm.reply("Noted.")
    with emulator_stack(llm, monkeypatch) as stack:
        stream = stack.client.chat.completions.create(
            model="iris", messages=[{"role": "user", "content": "I like tea"}], user="sam",
            stream=True)
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        assert text == "Let me note that.\n\nNoted."
        (reply,) = stack.runtime.store.db.query(
            "SELECT reply FROM inbox WHERE platform_message_id LIKE 'http:sam:%'")
        assert reply["reply"] == "Noted."
        assert all(r.get("stream") for r in llm.requests)


def test_a_plain_request_does_not_stream_the_model(monkeypatch):
    llm = ScriptedLLM()
    llm.reply("Whole answer.")
    with emulator_stack(llm, monkeypatch) as stack:
        answer = stack.client.chat.completions.create(
            model="iris", messages=[{"role": "user", "content": "hi"}], user="sam")
        assert answer.choices[0].message.content == "Whole answer."
        assert "stream" not in llm.requests[0]


def test_a_tool_call_printed_as_text_is_never_streamed(monkeypatch):
    llm = ScriptedLLM()
    llm.reply('Noted.\n{"name": "memory", "arguments": {"action": "add", "content": "tea"}}\n'
              "Anything else?")
    llm.reply('<tool_call>\n{"name": "clock", "arguments": {}}\n</tool_call>')  # only a call
    llm.reply("It is teatime somewhere.")
    with emulator_stack(llm, monkeypatch) as stack:
        for question, answer in (("I like tea", "Noted.\n\nAnything else?"),
                                 ("what time is it?", "It is teatime somewhere.")):
            stream = stack.client.chat.completions.create(
                model="iris", messages=[{"role": "user", "content": question}], user="sam",
                stream=True)
            text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
            assert '"name"' not in text and "tool_call" not in text, text
            assert text.split() == answer.split()  # once, not the raw text then the clean one
        replies = [r["reply"] for r in stack.runtime.store.db.query(
            "SELECT reply FROM inbox WHERE platform_message_id LIKE 'http:sam:%' ORDER BY id")]
        assert replies == ["Noted.\n\nAnything else?", "It is teatime somewhere."]
