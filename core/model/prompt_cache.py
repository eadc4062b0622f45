"""Anthropic prompt-cache breakpoints, added to OpenAI-shaped messages that litellm forwards.

Anthropic caches the prompt prefix up to each ``cache_control`` marker (at most four per
request). Iris marks the system prompt (frozen per session, so byte-identical across its turns)
and the last few messages, so each turn reads the previous turn's prefix from the cache.
"""

from __future__ import annotations

import copy
from typing import Any

MAX_BREAKPOINTS = 4
EPHEMERAL = {"type": "ephemeral"}


def wants_cache_control(model: str) -> bool:
    """Anthropic models, directly or through Bedrock, Vertex AI or OpenRouter."""
    name = model.lower()
    return name.startswith("anthropic/") or "claude" in name


def _mark(message: dict[str, Any]) -> bool:
    """Put a breakpoint on ``message``; False when it has nothing to mark."""
    content = message.get("content")
    if message.get("role") == "tool":
        message["cache_control"] = dict(EPHEMERAL)
        return True
    if isinstance(content, str):
        if not content:
            return False
        message["content"] = [{"type": "text", "text": content, "cache_control": dict(EPHEMERAL)}]
        return True
    if isinstance(content, list) and content and isinstance(content[-1], dict):
        content[-1]["cache_control"] = dict(EPHEMERAL)
        return True
    return False


def with_cache_control(messages: list[dict[str, Any]], *, recent: int = 3) -> list[dict[str, Any]]:
    """A copy of ``messages`` with breakpoints on the first system message and on the last
    ``recent`` messages that carry content (within Anthropic's limit of four)."""
    out = copy.deepcopy(messages)
    used = 0
    for message in out:
        if message.get("role") == "system":
            used += _mark(message)
            break
    budget = min(recent, MAX_BREAKPOINTS - used)
    for message in reversed(out):
        if budget <= 0:
            break
        if message.get("role") == "system":
            continue
        if _mark(message):
            budget -= 1
    return out
