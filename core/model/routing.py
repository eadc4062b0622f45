"""Which model answers: the configured main model, a user's /model choice, a cheap side model."""

from __future__ import annotations

from typing import Protocol

from core.config import Settings
from core.errors import ConfigError
from core.model.llm import ChatModel, LiteLLMModel, Model, needs_litellm_for, uses_direct


class ModelRouter(Protocol):
    def main(self, override: str | None = None) -> Model: ...

    def side(self) -> Model: ...


def build_model(settings: Settings, name: str) -> ChatModel:
    """``name`` as settings configure it: an OpenAI-compatible server at ``model_api_base``
    through the direct client, any other model through litellm (``IRIS_MODEL_CLIENT``)."""
    s = settings
    kind: type[ChatModel] = LiteLLMModel
    if uses_direct(name, s.model_api_base, s.model_client):
        from core.model.direct import DirectModel  # httpx: not on a webhook's ack path

        kind = DirectModel
    return kind(
        name=name,
        api_base=s.model_api_base,
        api_key=s.secret("model_api_key"),
        timeout=s.model_timeout,
        retries=s.model_retries,
        temperature=s.temperature,
        max_tokens=s.max_output_tokens,
        prompt_caching=s.prompt_caching,
        free=s.model_free and name == s.model,
    )


def needs_litellm(settings: Settings) -> bool:
    """Whether a turn's models go through litellm (False: both are the direct client's)."""
    return needs_litellm_for((settings.model, settings.cheap_model), settings.model_api_base,
                             settings.model_client)


def sees_images(settings: Settings, name: str) -> tuple[bool, str]:
    """Whether ``name`` takes image parts, and whose word that is: litellm's model info, or the
    same table read directly for a model the direct client calls (no litellm import)."""
    if uses_direct(name, settings.model_api_base, settings.model_client):
        from core.model import table as model_table
        return model_table.sees_images(name), "litellm's model table"
    from core.model.llm import supports_vision

    return supports_vision(name), "litellm's model info"


class SettingsRouter:
    """Models built from settings; one instance per process, models cached by name."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._cache: dict[str, Model] = {}

    def _build(self, name: str) -> Model:
        if name not in self._cache:
            self._cache[name] = build_model(self.settings, name)
        return self._cache[name]

    def main(self, override: str | None = None) -> Model:
        name = override or self.settings.model
        if not name:
            raise ConfigError("IRIS_MODEL", "no model configured (e.g. openai/gpt-4o-mini)")
        return self._build(name)

    def side(self) -> Model:
        return self._build(self.settings.cheap_model) if self.settings.cheap_model else self.main()
