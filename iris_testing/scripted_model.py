"""A scripted in-process model for unit tests: each step returns the next scripted response."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.errors import ProviderError
from core.messages import Message, ToolCall, Usage
from core.model.llm import ModelResponse, ToolSpec

Step = str | Message | ProviderError | Callable[[list[Message]], "Step"]


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(id=f"call_{name}_{id(arguments)}", name=name, arguments=json.dumps(arguments))


def tool_calls(*calls: ToolCall, text: str = "") -> Message:
    return Message(role="assistant", content=text, tool_calls=tuple(calls))


@dataclass
class ScriptedModel:
    steps: list[Step] = field(default_factory=list)
    name: str = "scripted/test"
    requests: list[list[Message]] = field(default_factory=list)
    tools_seen: list[list[str]] = field(default_factory=list)

    def then(self, *steps: Step) -> ScriptedModel:
        self.steps.extend(steps)
        return self

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec] = ()
    ) -> ModelResponse:
        self.requests.append(list(messages))
        self.tools_seen.append([t.name for t in tools])
        if not self.steps:
            raise AssertionError("the scripted model ran out of steps")
        step = self.steps.pop(0)
        while callable(step) and not isinstance(step, Message):
            step = step(list(messages))
        if isinstance(step, ProviderError):
            raise step
        message = step if isinstance(step, Message) else Message(role="assistant", content=step)
        usage = Usage(model=self.name, prompt_tokens=10 * len(messages), completion_tokens=5)
        return ModelResponse(message=message, usage=usage, finish_reason="stop")


@dataclass
class FixedRouter:
    model: Any

    def main(self, override: str | None = None) -> Any:
        return self.model

    def side(self) -> Any:
        return self.model
