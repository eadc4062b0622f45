"""WhatsApp buttons for ``clarify`` questions: the interactive message the sender posts instead
of plain text. Up to three choices are reply buttons (``interactive.type: button``, a title of
at most 20 characters each); four are a list (``type: list``, rows titled in at most 24
characters, the whole choice as the row's description). Each button's or row's id is Iris'
button data; a press comes back as a message of type ``interactive`` (``button_reply`` or
``list_reply`` with that id), read by ``core.platforms.whatsapp_inbound``.
"""

from __future__ import annotations

from typing import Any

from core.asking.clarify import button_data

BODY_LIMIT = 1024  # an interactive message's body text
BUTTON_TITLE = 20
ROW_TITLE = 24
ROW_DESCRIPTION = 72
MAX_BUTTONS = 3
LIST_BUTTON = "Choose"


def _titles(labels: list[str], limit: int) -> list[str]:
    """The labels when all fit; otherwise each numbered and cut, so they stay distinct."""
    if all(len(label) <= limit for label in labels):
        return labels
    titles = []
    for n, label in enumerate(labels, 1):
        title = f"{n}. {label}"
        titles.append(title if len(title) <= limit else title[:limit - 1].rstrip() + "…")
    return titles


def question_interactive(text: str, choices: dict[str, Any]) -> dict[str, Any] | None:
    """The ``interactive`` object for a question with ``choices``, or None when the text is too
    long for an interactive message's body (it then goes as text, its choices numbered)."""
    labels = list(choices["labels"])
    if not labels or len(text) > BODY_LIMIT:
        return None
    ids = [button_data(choices["id"], n) for n in range(1, len(labels) + 1)]
    if len(labels) <= MAX_BUTTONS:
        return {"type": "button", "body": {"text": text}, "action": {"buttons": [
            {"type": "reply", "reply": {"id": id_, "title": title}}
            for id_, title in zip(ids, _titles(labels, BUTTON_TITLE), strict=True)]}}
    rows = []
    for id_, title, label in zip(ids, _titles(labels, ROW_TITLE), labels, strict=True):
        row = {"id": id_, "title": title}
        if title != label:
            row["description"] = label[:ROW_DESCRIPTION]
        rows.append(row)
    return {"type": "list", "body": {"text": text},
            "action": {"button": LIST_BUTTON, "sections": [{"rows": rows}]}}
