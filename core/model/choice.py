"""Which models a person may choose (``/model``, a scheduled job's ``model``).

Every model is billed to the operator, so a chat user picks only from ``allowed_models``
(default: the configured main and side models); an owner may pick any model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.errors import IrisUsageError

if TYPE_CHECKING:
    from core.config import Settings


def allowed_models(settings: Settings) -> list[str]:
    """The models anyone may choose, in the order they are configured."""
    configured: list[str | None] = [settings.model, settings.cheap_model]
    if settings.allowed_models:
        configured = list(settings.allowed_models)
    return list(dict.fromkeys(name for name in configured if name))


def model_name(text: str) -> str:
    """A litellm model string as typed (``provider/model``), or IrisUsageError."""
    name = text.strip()
    if not name or any(ch.isspace() for ch in name) or "/" not in name:
        raise IrisUsageError("a model name looks like provider/model, e.g. openai/gpt-4o-mini")
    return name


def check_choice(settings: Settings, text: str, *, owner: bool) -> str:
    """``text`` as a model this person may choose; IrisUsageError naming the allowed ones."""
    name = model_name(text)
    if owner:
        return name
    allowed = allowed_models(settings)
    if name in allowed:
        return name
    if not allowed:
        raise IrisUsageError(f"{name} is not allowed here: only an owner of this Iris can "
                             "choose a model")
    raise IrisUsageError(f"{name} is not one of the models this Iris allows "
                         f"({', '.join(allowed)}); only an owner can choose another")
