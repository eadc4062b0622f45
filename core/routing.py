"""Which model answers: the configured main model, a user's /model choice, a cheap side model."""

from __future__ import annotations

from typing import Protocol

from core.config import Settings
from core.errors import ConfigError
from core.llm import LiteLLMModel, Model


class ModelRouter(Protocol):
    def main(self, override: str | None = None) -> Model: ...

    def side(self) -> Model: ...


class SettingsRouter:
    """Models built from settings; one instance per process, models cached by name."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._cache: dict[str, Model] = {}

    def _build(self, name: str) -> Model:
        if name not in self._cache:
            s = self.settings
            self._cache[name] = LiteLLMModel(
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
        return self._cache[name]

    def main(self, override: str | None = None) -> Model:
        name = override or self.settings.model
        if not name:
            raise ConfigError("IRIS_MODEL", "no model configured (e.g. openai/gpt-4o-mini)")
        return self._build(name)

    def side(self) -> Model:
        return self._build(self.settings.cheap_model) if self.settings.cheap_model else self.main()
