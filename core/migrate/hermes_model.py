"""Hermes' ``model`` setting (``config.yaml``, or a cron job's) as a litellm model string."""

from __future__ import annotations

from typing import Any

OPENAI_COMPATIBLE = {"custom", "ollama", "vllm", "llamacpp", "lmstudio", "nous", "nous-api"}
PREFIXES = {"openrouter": "openrouter", "anthropic": "anthropic", "openai": "openai",
            "openai-codex": "openai", "gemini": "gemini", "deepinfra": "deepinfra",
            "huggingface": "huggingface", "nvidia": "nvidia_nim", "ollama-cloud": "ollama"}


def hermes_model(config: dict[str, Any]) -> tuple[str | None, list[str]]:
    """A litellm model string for Hermes' ``model`` setting, and what the operator must do."""
    section = config.get("model")
    if isinstance(section, str):
        section = {"default": section}
    if not isinstance(section, dict):
        return None, []
    name = section.get("default") or section.get("model")
    if not isinstance(name, str) or not name.strip() or any(c.isspace() for c in name.strip()):
        return None, ["config.yaml names no usable model"]
    name = name.strip()
    provider = str(section.get("provider") or "auto").lower()
    base_url = section.get("base_url") if isinstance(section.get("base_url"), str) else None
    notes: list[str] = []
    if provider == "auto" and base_url and "openrouter.ai" in base_url:
        provider = "openrouter"
    if provider in PREFIXES:
        prefix = PREFIXES[provider]
        model = name if name.startswith(f"{prefix}/") else f"{prefix}/{name}"
    elif provider in OPENAI_COMPATIBLE or (provider == "auto" and base_url):
        if not base_url:
            return None, [f"provider {provider!r} without base_url has no Iris equivalent"]
        model = f"openai/{name}"
        notes.append(f"this model is served at {base_url}: set IRIS_MODEL_API_BASE={base_url}")
    elif provider == "auto" and "/" in name:
        model = f"openrouter/{name}"
    else:
        return None, [f"provider {provider!r} has no Iris equivalent; set IRIS_MODEL yourself"]
    notes.append("API keys were not copied: set IRIS_MODEL_API_KEY for this provider")
    return model, notes
