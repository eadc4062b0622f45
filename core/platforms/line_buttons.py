"""LINE quick-reply buttons for ``clarify`` questions: a ``quickReply`` object on the message
(at most 13 items, each an ``action`` of type ``postback`` whose label is at most 20
characters and whose data, Iris' button data, at most 300). A tap comes back as a ``postback``
event carrying that data (read by ``core.platforms.line_inbound``) and shows ``displayText`` in
the chat as the person's answer."""

from __future__ import annotations

from typing import Any

from core.asking.clarify import button_data

LABEL_LIMIT = 20
MAX_ITEMS = 13
DISPLAY_LIMIT = 300


def _label(number: int, label: str) -> str:
    if len(label) <= LABEL_LIMIT:
        return label
    title = f"{number}. {label}"
    return title[: LABEL_LIMIT - 1].rstrip() + "…"


def quick_reply(choices: dict[str, Any]) -> dict[str, Any]:
    labels = list(choices["labels"])[:MAX_ITEMS]
    return {
        "items": [
            {
                "type": "action",
                "action": {
                    "type": "postback",
                    "label": _label(n, label),
                    "data": button_data(choices["id"], n),
                    "displayText": label[:DISPLAY_LIMIT],
                },
            }
            for n, label in enumerate(labels, 1)
        ]
    }
