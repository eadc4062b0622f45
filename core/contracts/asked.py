"""A question the ``clarify`` tool asked (``core.asking.clarify``): the turn ends with it as its
answer, and senders that draw buttons draw one per choice. Small and light on purpose: the
webhooks that acknowledge a press name it, and the ack path loads none of the tool machinery."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Asked:
    """A question the ``clarify`` tool asked (core.asking.clarify): the turn ends with it."""

    id: str
    question: str
    choices: tuple[str, ...]

    def text(self) -> str:
        """The question as the turn's answer: what text-only platforms show, and what the model
        sees in the history."""
        if not self.choices:
            return self.question
        lines = [f"{n}. {label}" for n, label in enumerate(self.choices, 1)]
        return f"{self.question}\n\n" + "\n".join(lines) + (
            "\n\nAnswer with a number, or in your own words.")

    def target(self) -> dict[str, Any]:
        """What the reply's delivery carries for senders that draw buttons."""
        return {"choices": {"id": self.id, "labels": list(self.choices)}}
