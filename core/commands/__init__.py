"""Slash commands, the same on every platform. A command never costs a model call unless it
asks the turn to continue (``CommandResult.continue_with``)."""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from core.config import Settings
    from core.contracts.services import Services
    from core.store import Store
    from core.store.sessions import Session

COMMAND_RE = re.compile(
    r"^/(?P<name>[A-Za-z][A-Za-z0-9_-]{0,63})(?:@\S+)?(?:\s+(?P<args>.*))?$", re.S
)



@dataclass(kw_only=True)
class CommandContext:
    store: Store
    settings: Settings
    services: Services
    user_id: str
    account: str
    chat_key: str
    platform: str
    session: Session
    is_owner: bool = False
    inbox_id: int | None = None  # the turn's inbox entry: what /stop marks
    surface: str = ""  # the label of sessions started here (InboundMessage.surface)


@dataclass(frozen=True)
class CommandResult:
    reply: str | None = None
    session: Session | None = None  # the session the chat continues in, when it changed
    continue_with: str | None = None  # run a model turn on this text instead
    extra_context: str | None = None  # added to the turn's prompt for this turn only


Handler = Callable[[CommandContext, str], Awaitable[CommandResult]]


@dataclass(frozen=True)
class Command:
    name: str
    summary: str
    handler: Handler
    owner_only: bool = False


REGISTRY: dict[str, Command] = {}
# Consulted for names that are not commands (e.g. /<skill-name>); returns None to decline.
FALLBACKS: list[Callable[[CommandContext, str, str], Awaitable[CommandResult | None]]] = []


SyncHandler = Callable[[CommandContext, str], CommandResult]


def command(
    name: str, summary: str, *, owner_only: bool = False
) -> Callable[[Handler | SyncHandler], Handler]:
    """Register a command. A plain (not ``async``) handler is one whose work is store reads and
    writes: it runs in the ``store`` lane as the user's work, off the event loop, so a slow
    remote database holds up no one else's turn."""

    def register(handler: Handler | SyncHandler) -> Handler:
        if inspect.iscoroutinefunction(handler):
            found: Handler = handler
        else:
            plain = cast("SyncHandler", handler)

            @functools.wraps(plain)
            async def found(ctx: CommandContext, args: str) -> CommandResult:
                from core.lanes import blocking

                return await blocking("store", ctx.user_id, plain, ctx, args, what=f"/{name}")

        REGISTRY[name] = Command(name, summary, found, owner_only)
        return found

    return register


def _load() -> None:
    """Import every module of this package: each registers its commands with @command."""
    for module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
        if not module.startswith("_"):
            importlib.import_module(f"{__name__}.{module}")


def parse_command(text: str) -> tuple[str, str] | None:
    match = COMMAND_RE.match(text.strip())
    if not match:
        return None
    return match["name"].lower(), (match["args"] or "").strip()


def help_text() -> str:
    _load()
    lines = ["Commands:"]
    lines += [f"/{c.name} — {c.summary}" for c in sorted(REGISTRY.values(), key=lambda c: c.name)]
    return "\n".join(lines)


async def run_command(ctx: CommandContext, text: str) -> CommandResult | None:
    """Handle ``text`` if it is a slash command; None means it is an ordinary message."""
    parsed = parse_command(text)
    if parsed is None:
        return None
    _load()
    name, args = parsed
    found = REGISTRY.get(name)
    if found is None:
        for fallback in FALLBACKS:
            result = await fallback(ctx, name, args)
            if result is not None:
                return result
        return CommandResult(reply=f"Unknown command /{name}.\n\n{help_text()}")
    if found.owner_only and not ctx.is_owner:
        return CommandResult(reply=f"/{name} is only for the owner of this Iris.")
    return await found.handler(ctx, args)
