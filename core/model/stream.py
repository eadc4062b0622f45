"""Assembling a streamed chat completion (OpenAI's ``chat.completion.chunk`` shape, as litellm
passes it on) into one message: text deltas joined, tool calls put together from their
fragments (the id and name come first, the arguments in pieces, each keyed by ``index``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from core.messages import Message, ToolCall


def _get(obj: Any, name: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


@dataclass
class _PartialCall:
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class StreamAssembler:
    text: list[str] = field(default_factory=list)
    calls: list[_PartialCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: Any = None
    _slots: dict[int, int] = field(default_factory=dict)

    def add(self, chunk: Any) -> str:
        """Take one chunk; returns its text delta ("" when it has none)."""
        usage = _get(chunk, "usage")
        if usage is not None and (_get(usage, "prompt_tokens") or _get(usage, "completion_tokens")):
            self.usage = usage
        choices = _get(chunk, "choices") or []
        if not choices:
            return ""
        choice = choices[0]
        self.finish_reason = _get(choice, "finish_reason") or self.finish_reason
        delta = _get(choice, "delta")
        if delta is None:
            return ""
        for fragment in _get(delta, "tool_calls") or []:
            self._call(fragment)
        content = _get(delta, "content")
        if isinstance(content, str) and content:
            self.text.append(content)
            return content
        return ""

    @property
    def has_tool_calls(self) -> bool:
        return bool(self.calls)

    def _call(self, fragment: Any) -> None:
        index = _get(fragment, "index")
        call_id = _get(fragment, "id")
        function = _get(fragment, "function")
        slot = self._slot(index, call_id)
        if call_id:
            slot.id = call_id
        name = _get(function, "name") if function is not None else None
        if name:
            # Most providers send the name once; some repeat it whole on later fragments.
            slot.name = name if slot.name in ("", name) else slot.name + name
        arguments = _get(function, "arguments") if function is not None else None
        if isinstance(arguments, dict):
            arguments = json.dumps(arguments)
        if arguments:
            slot.arguments.append(arguments)

    def _slot(self, index: Any, call_id: str | None) -> _PartialCall:
        if isinstance(index, int) and index in self._slots:
            slot = self.calls[self._slots[index]]
            if call_id and slot.id and call_id != slot.id:  # a new call reusing the index
                self.calls.append(_PartialCall())
                self._slots[index] = len(self.calls) - 1
            return self.calls[self._slots[index]]
        if isinstance(index, int):
            self.calls.append(_PartialCall())
            self._slots[index] = len(self.calls) - 1
            return self.calls[-1]
        # No index: a fragment with an id starts a call, one without continues the last.
        if call_id or not self.calls:
            self.calls.append(_PartialCall())
        return self.calls[-1]

    def message(self) -> Message:
        calls = tuple(
            ToolCall(id=call.id or f"call_{number}", name=call.name,
                     arguments="".join(call.arguments) or "{}")
            for number, call in enumerate(self.calls)
        )
        return Message(role="assistant", content="".join(self.text), tool_calls=calls)
