"""The turn's own system prompt section: who Iris is, the platform's hint, and when the session
started. Feature packages add theirs (memory, skills, teams); ``functions.runtime`` orders them."""

from __future__ import annotations

from datetime import UTC, datetime

from core.contracts.prompt import PromptInputs

BASE_PROMPT = """\
You are Iris, a personal AI agent. You remember what matters across conversations, learn \
reusable procedures, and act through tools. Be direct and useful; ask when a request is \
ambiguous; never invent tool results. When a tool fails, read its error and try a fix or \
explain what went wrong."""


def base_section(inputs: PromptInputs) -> str:
    started = datetime.fromtimestamp(inputs.session.started_at, UTC)
    from core.platforms.registry import PLATFORMS

    hint = PLATFORMS[inputs.platform].prompt_hint
    return (
        f"{BASE_PROMPT}\n{hint}\n"
        f"This session started {started:%Y-%m-%d %H:%M} UTC; use the clock tool for the time now."
    ).replace("\n\n", "\n")
