"""litellm's model table read without importing litellm agrees with litellm's own answers, and
settings pick the client: the direct one only for an ``openai/`` model at ``model_api_base``."""

import json
import random

import pytest

from core.config import Settings
from core.model import table as model_table
from core.model.direct import DirectModel
from core.model.llm import LiteLLMModel, load_litellm
from core.model.routing import build_model, needs_litellm, sees_images


def _openai_chat_names(count: int) -> list[str]:
    path = model_table.table_path()
    assert path is not None, "litellm's model table is not installed"
    table = json.loads(path.read_text(encoding="utf-8"))
    names = sorted(name for name, info in table.items()
                   if isinstance(info, dict) and info.get("litellm_provider") == "openai"
                   and info.get("mode") == "chat" and "/" not in name)
    return random.Random(7).sample(names, min(count, len(names)))


@pytest.mark.parametrize("name", _openai_chat_names(40))
def test_the_table_says_what_litellm_says(name):
    litellm = load_litellm()
    full = f"openai/{name}"
    info = litellm.get_model_info(full)
    assert model_table.context_window(full) == (info.get("max_input_tokens")
                                                or info.get("max_tokens"))
    assert model_table.sees_images(full) == bool(litellm.supports_vision(model=full))
    prompt_cost, completion_cost = litellm.cost_per_token(
        model=full, prompt_tokens=1000, completion_tokens=200)
    assert model_table.price(full, 1000, 200) == pytest.approx(prompt_cost + completion_cost)


def test_an_unknown_name_knows_nothing():
    assert not model_table.known("openai/no-such-model-anywhere")
    assert model_table.entry("openai/no-such-model-anywhere") is None
    assert model_table.known("openai/no-such-model-anywhere")  # the absence is kept too
    assert model_table.context_window("openai/no-such-model-anywhere") is None
    assert model_table.price("openai/no-such-model-anywhere", 10, 10) is None
    assert not model_table.sees_images("openai/no-such-model-anywhere")


def test_cached_prompt_tokens_are_priced_at_the_cache_rate():
    full = model_table.price("openai/gpt-4o-mini", 1000, 0)
    cached = model_table.price("openai/gpt-4o-mini", 1000, 0, cache_read_tokens=1000)
    assert cached == pytest.approx(full / 2)  # 7.5e-08 against 1.5e-07 per token


def _settings(tmp_path, **values) -> Settings:
    return Settings(home=tmp_path, **values)


def test_settings_pick_the_client(tmp_path):
    base = "http://127.0.0.1:8000/v1"
    local = _settings(tmp_path, model="openai/qwen", model_api_base=base)
    assert isinstance(build_model(local, "openai/qwen"), DirectModel)
    assert not needs_litellm(local)
    assert isinstance(build_model(local, "anthropic/claude-sonnet-4"), LiteLLMModel)
    mixed = _settings(tmp_path, model="openai/qwen", cheap_model="anthropic/claude-haiku-4",
                      model_api_base=base)
    assert needs_litellm(mixed)
    forced = _settings(tmp_path, model="openai/qwen", model_api_base=base,
                       model_client="litellm")
    assert isinstance(build_model(forced, "openai/qwen"), LiteLLMModel)
    assert needs_litellm(forced)
    hosted = _settings(tmp_path, model="openai/gpt-4o-mini")
    assert isinstance(build_model(hosted, "openai/gpt-4o-mini"), LiteLLMModel)


def test_vision_is_looked_up_where_the_client_would(tmp_path):
    base = "http://127.0.0.1:8000/v1"
    direct = _settings(tmp_path, model="openai/gpt-4o", model_api_base=base)
    assert sees_images(direct, "openai/gpt-4o") == (True, "litellm's model table")
    assert sees_images(direct, "openai/my-local-model") == (False, "litellm's model table")
    hosted = _settings(tmp_path, model="openai/gpt-4o")
    assert sees_images(hosted, "openai/gpt-4o") == (True, "litellm's model info")
