import asyncio
import subprocess
import sys

import pytest

from core.errors import ProviderError
from core.messages import Message
from core.model.llm import LiteLLMModel, ToolSpec, classify_error, load_litellm

SYSTEM = Message(role="system", content="You are a test.")
USER = Message(role="user", content="hi")
CLOCK = ToolSpec(name="clock", description="time", parameters={"type": "object"})


def test_importing_core_does_not_import_litellm():
    code = (
        "import sys, core.model.llm, core.turn.loop, functions.app, functions.http_api;"
        "print('litellm' in sys.modules, 'mcp' in sys.modules, 'modal' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False False"


def test_mock_response_text_and_usage():
    model = LiteLLMModel(name="openai/gpt-4o-mini", extra={"mock_response": "mocked hello"})
    response = asyncio.run(model.complete([SYSTEM, USER]))
    assert response.message.content == "mocked hello"
    assert response.usage.model == "openai/gpt-4o-mini"
    assert response.usage.prompt_tokens > 0


def test_mock_tool_calls_are_parsed():
    calls = [{"id": "c1", "type": "function",
              "function": {"name": "clock", "arguments": '{"timezone": "UTC"}'}}]
    model = LiteLLMModel(name="openai/gpt-4o-mini", extra={"mock_tool_calls": calls})
    response = asyncio.run(model.complete([SYSTEM, USER], [CLOCK]))
    (call,) = response.message.tool_calls
    assert (call.name, call.parsed_arguments()) == ("clock", {"timezone": "UTC"})


@pytest.mark.parametrize(
    ("factory", "kind", "retryable"),
    [
        (lambda lib: lib.AuthenticationError("bad key", "openai", "m"), "auth", False),
        (lambda lib: lib.RateLimitError("slow", "openai", "m"), "rate_limit", True),
        (lambda lib: lib.Timeout("late", "m", "openai"), "timeout", True),
        (lambda lib: lib.ContextWindowExceededError("x", "m", "openai"), "context_window", False),
        (lambda lib: lib.BadRequestError("bad", "m", "openai"), "bad_request", False),
        (lambda lib: lib.ServiceUnavailableError("down", "openai", "m"), "unavailable", True),
        (lambda lib: lib.APIConnectionError("refused", "openai", "m"), "unavailable", True),
        (lambda lib: RuntimeError("weird"), "unknown", False),
    ],
)
def test_errors_are_classified(factory, kind, retryable):
    error = classify_error(factory(load_litellm()))
    assert (error.kind, error.retryable) == (kind, retryable)
    assert isinstance(error, ProviderError) and error.user_message()


def test_user_messages_are_actionable():
    assert "IRIS_MODEL_API_KEY" in ProviderError("auth", "x", retryable=False).user_message()
    assert "/new" in ProviderError("context_window", "x", retryable=False).user_message()
