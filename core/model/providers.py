"""Which credential a litellm model string needs, and whether it is present.

A model is usable when ``model_api_key`` is set, or the provider's own variable is (litellm
reads ``ANTHROPIC_API_KEY`` and friends from the environment), or the provider needs no key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from core.config import Settings

PROVIDER_KEYS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "gemini": ("GEMINI_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "cohere": ("COHERE_API_KEY",),
    "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY"),
    "fireworks_ai": ("FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY"),
    "perplexity": ("PERPLEXITYAI_API_KEY", "PERPLEXITY_API_KEY"),
    "cerebras": ("CEREBRAS_API_KEY",),
}
KEYLESS = frozenset({"ollama", "ollama_chat", "lm_studio", "hosted_vllm", "vllm", "llamafile"})


@dataclass(frozen=True)
class KeyStatus:
    provider: str
    ok: bool
    source: str | None  # where the key comes from, when found
    expected: tuple[str, ...] = ()  # variables that would satisfy it
    known: bool = True


def provider_of(model: str) -> str:
    return model.split("/", 1)[0] if "/" in model else "openai"


def key_status(settings: Settings, model: str, environ: Mapping[str, str]) -> KeyStatus:
    provider = provider_of(model)
    if settings.model_api_key is not None:
        return KeyStatus(provider, True, "IRIS_MODEL_API_KEY")
    if provider in KEYLESS:
        return KeyStatus(provider, True, None)
    if settings.model_api_base and provider == "openai":
        return KeyStatus(provider, True, None)
    expected = PROVIDER_KEYS.get(provider)
    if expected is None:
        return KeyStatus(provider, True, None, known=False)
    for name in expected:
        if environ.get(name):
            return KeyStatus(provider, True, name, expected)
    return KeyStatus(provider, False, None, ("IRIS_MODEL_API_KEY", *expected))
