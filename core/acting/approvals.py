"""Dangerous commands: refused, or held until the user approves them with ``/approve``.

A command the terminal tool finds dangerous (``core.security`` patterns plus the setting
``dangerous_command_patterns``) is never run on the model's word. In a chat with a person
(HTTP, CLI, Telegram, Slack) it is stored as held command #N of that user, expiring after
``approval_minutes``; anywhere else (cron jobs, subagents), or with ``dangerous_commands:
refuse``, it is refused. ``/approve N`` runs exactly the stored text, once, in the user's
sandbox, and the turn continues so the model sees the result and reports it
(``core.commands.held``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from core.platforms.registry import PLATFORMS
from core.store.acting import HeldCommand

if TYPE_CHECKING:
    from core.config import Settings
    from core.contracts.toolkit import ToolContext
    from core.security import DangerousPattern

@lru_cache(maxsize=16)
def _patterns(extra: tuple[str, ...]) -> tuple[DangerousPattern, ...]:
    from core.security import compile_patterns

    return compile_patterns(list(extra))


def danger_of(settings: Settings, command: str) -> str | None:
    """Why ``command`` must not run unapproved, or None when it may run."""
    from core.security.commands import check_command, find_exfiltration
    from core.security.scanner import fold

    found = check_command(command, _patterns(tuple(settings.dangerous_command_patterns)))
    if found is None:
        leaks = find_exfiltration(fold(command))
        found = leaks[0] if leaks else None
    return None if found is None else found.reason


def may_hold(ctx: ToolContext) -> bool:
    """Whether a person in this chat can approve a held command."""
    return ctx.settings.dangerous_commands == "approve" and PLATFORMS[ctx.platform].interactive


def hold_command(
    ctx: ToolContext, command: str, *, workdir: str | None, timeout: float | None, reason: str
) -> HeldCommand:
    return ctx.store.held.hold(
        ctx.user_id, chat_key=ctx.chat_key, session_id=ctx.session_id, command=command,
        workdir=workdir, timeout=timeout, reason=reason, ttl=ctx.settings.approval_minutes * 60,
        requested_by=ctx.account,
    )
