"""``/approve N``, ``/approve list``, ``/approve deny N``: the user's held commands
(``core.acting.approvals`` holds them). An approved command runs exactly as stored, once, in the
user's sandbox, and the turn continues so the model sees the result and reports it. A ``/stop``
in the chat while it runs ends it, as it ends a ``terminal`` command
(``core.acting.stopping``): the ``/approve`` message's turn is the one ``/stop`` marks."""

from __future__ import annotations

import re

from core.commands import CommandContext, CommandResult
from core.errors import NotFound
from core.identity.access import is_owner_account
from core.lanes import blocking
from core.platforms.registry import PLATFORMS
from core.store.acting import HeldCommand, HeldCommands

RESULT_CHARS = 4_000
_NUMBER = re.compile(r"#?(\d{1,9})")
_DENY_WORDS = frozenset({"deny", "no", "reject", "cancel", "drop"})


def _describe(held: HeldCommand, at: float) -> str:
    minutes = max(0, round((held.expires_at - at) / 60))
    where = f" in {held.workdir}" if held.workdir else ""
    return f"#{held.number}: `{held.command}`{where} ({held.reason}; expires in {minutes} min)"


def _listing(pending: list[HeldCommand], at: float) -> str:
    lines = ["Commands waiting for your approval:"]
    lines += [_describe(held, at) for held in pending]
    lines.append("Send /approve N to run one, or /approve deny N to drop it.")
    return "\n".join(lines)


async def approve_pending(ctx: CommandContext, arg: str) -> CommandResult | None:
    """Handle ``/approve [N | deny N | list]`` for held commands.

    Returns None when this is not about held commands (an argument of another shape, or a
    bare ``/approve`` while nothing is held), so the caller can try pairing codes instead.
    """
    decided = await blocking("store", ctx.user_id, _decide, ctx, arg, what="/approve")
    if isinstance(decided, int):
        return await _run(ctx, ctx.store.held, decided)
    return decided


def _decide(ctx: CommandContext, arg: str) -> CommandResult | int | None:
    """``approve_pending``'s store work, in the ``store`` lane: a reply, None (not about held
    commands), or the number of the held command to run."""
    words = arg.strip().split()
    held = ctx.store.held
    pending = held.pending(ctx.user_id)
    if not words:
        if not pending:
            return None
        if len(pending) > 1:
            return CommandResult(reply=_listing(pending, ctx.store.clock.now()))
        if not may_decide(ctx, pending[0].requested_by):
            return _not_yours(pending[0].number)
        return pending[0].number
    if words == ["list"]:
        if not pending:
            return CommandResult(reply="No commands are waiting for your approval.")
        return CommandResult(reply=_listing(pending, ctx.store.clock.now()))
    deny = words[0].lower() in _DENY_WORDS
    rest = words[1:] if deny else words
    if len(rest) != 1 or not (match := _NUMBER.fullmatch(rest[0])):
        return None
    number = int(match[1])
    found = held.get(ctx.user_id, number)
    if found is not None and not may_decide(ctx, found.requested_by):
        return _not_yours(number)
    if deny:
        if held.deny(ctx.user_id, number):
            return CommandResult(reply=f"Dropped held command #{number}; it will not run.")
        return CommandResult(reply=_not_pending(held, ctx.user_id, number))
    return number


def may_decide(ctx: CommandContext, requested_by: str | None) -> bool:
    """In a group, what one member asked for is theirs (or an owner's) to approve or deny;
    in a person's own chats, any of their linked accounts may."""
    if requested_by is None or requested_by == ctx.account:
        return True
    if ctx.store.users.get(ctx.user_id).kind != "group":
        return True
    if is_owner_account(ctx.settings, ctx.account):
        return True
    try:
        return ctx.store.users.get(ctx.store.users.resolve(ctx.account)).is_owner
    except NotFound:
        return False


def _not_yours(number: int) -> CommandResult:
    return CommandResult(reply=f"Held command #{number} was asked for by another member of "
                         "this group: only they or an owner can approve or deny it.")


def _not_pending(held: HeldCommands, user_id: str, number: int) -> str:
    found = held.get(user_id, number)
    if found is None:
        return f"There is no held command #{number}."
    if found.status == "pending":
        return f"Held command #{number} expired; ask me again if it is still needed."
    return f"Held command #{number} was already {found.status}."


async def _run(ctx: CommandContext, held: HeldCommands, number: int) -> CommandResult:
    if not PLATFORMS[ctx.platform].interactive:
        return CommandResult(
            reply="Held commands can only be approved by a person in a chat, not from "
            f"{ctx.platform}."
        )
    def claim() -> HeldCommand | str:
        if not held.claim(ctx.user_id, number):
            return _not_pending(held, ctx.user_id, number)
        found = held.get(ctx.user_id, number)
        assert found is not None
        return found

    command = await blocking("store", ctx.user_id, claim, what="/approve")
    if isinstance(command, str):
        return CommandResult(reply=command)
    workspaces = ctx.services.workspaces
    timeout = min(command.timeout or ctx.settings.sandbox_timeout, ctx.settings.sandbox_max_timeout)
    from core.acting.stopping import noted_if_stopped, watch_for_stop

    stopped = False
    try:
        async with workspaces.use(ctx.user_id) as box, \
                watch_for_stop(ctx, "approved command") as stop:
            result = await box.exec(command.command, cwd=command.workdir, timeout=timeout,
                                    stop=stop)
    except Exception as exc:
        output, exit_code = f"could not run: {exc}", None
    else:
        from core.acting.output import format_exec

        stopped = result.stopped
        output = format_exec(noted_if_stopped(result, "command"),
                             ctx.settings.max_tool_output_chars)
        exit_code = result.exit_code
    await blocking("store", ctx.user_id, held.finish, ctx.user_id, number, exit_code=exit_code,
                   output=output[:RESULT_CHARS], what="/approve")
    from core.security.untrusted import wrap_untrusted

    ran = "was started, then ended by the user's /stop" if stopped else "has now run once"
    facts = (
        f"The user approved held command #{number} (`{command.command}`), and it {ran} in "
        f"the workspace. Its result:\n{wrap_untrusted('terminal', output)}\n"
        "Tell the user what happened, then carry on with the task if there is more to do."
    )
    return CommandResult(continue_with=f"/approve {number}", extra_context=facts)


async def held_writes(ctx: CommandContext, kind: str, verb: str, arg: str) -> CommandResult:
    """``/memory|/skills pending``, ``… approve N|all`` and ``… reject N|all``: writes held
    for the user's confirmation (``core.asking.confirm``); for skills also ``review NAME`` and
    ``approve|reject NAME`` for imports in quarantine. In a group, each held write is its
    asker's (or an owner's) to decide, and a quarantined import an owner's. The store work
    runs in the ``store`` lane, approvals in theirs (``core.asking.confirm.approve``)."""
    from core.asking import confirm
    if verb == "review":
        return CommandResult(reply=await _review(ctx, arg))
    plan = await blocking("store", ctx.user_id, _plan, ctx, kind, verb, arg,
                          what=f"{kind} {verb}")
    if isinstance(plan, str):
        return CommandResult(reply=plan)
    replies = []
    for step in plan:
        if isinstance(step, str):
            replies.append(step)
        elif isinstance(step, int):
            replies.append(await confirm.approve(ctx.store, ctx.settings, ctx.user_id, kind,
                                                 step, by=ctx.account))
        else:
            replies.append(await confirm.decide_quarantined(
                ctx.store, ctx.settings, ctx.user_id, verb, step[0], by=ctx.account))
    return CommandResult(reply="\n".join(replies))


Step = str | int | tuple[str]


def _plan(ctx: CommandContext, kind: str, verb: str, arg: str) -> str | list[Step]:
    """What ``held_writes`` does, decided in the ``store`` lane: a whole reply, or in order
    a reply line (refusals, rejections done here), a held write number to approve, or a
    quarantined import's ``(name,)`` to decide."""
    from core.asking import confirm
    from core.errors import IrisUsageError

    if verb == "pending":
        return confirm.listing(ctx.store, ctx.user_id, kind)
    try:
        chosen, names = confirm.choices(ctx.store, ctx.user_id, kind, arg)
    except IrisUsageError as exc:
        return str(exc)
    if not chosen and not names:
        return confirm.listing(ctx.store, ctx.user_id, kind)
    steps: list[Step] = []
    for number in chosen:
        found = ctx.store.held_writes.get(ctx.user_id, number)
        if found is not None and not may_decide(ctx, found.requested_by):
            steps.append(f"#{number} was asked for by another member of this group: only "
                         "they or an owner can decide it.")
        elif verb == "approve":
            steps.append(number)
        else:
            steps.append(confirm.reject(ctx.store, ctx.user_id, kind, number, by=ctx.account))
    for name in names:
        if not may_decide(ctx, IMPORTED):
            steps.append(f"{name}: only an owner can decide a quarantined import in a group.")
        else:
            steps.append((name,))
    return steps


IMPORTED = "import"  # who "asked" for a quarantined skill: an import, so nobody in the chat


async def _review(ctx: CommandContext, name: str) -> str:

    from core.skills import quarantine
    from core.skills.library import SkillLibrary

    if not name.strip():
        return "Which one? /skills review NAME (see /skills pending)."
    library = SkillLibrary(ctx.store, ctx.settings)
    try:
        item = quarantine.get(library, ctx.user_id, name.strip())
    except NotFound as exc:
        return str(exc)
    return await blocking("skills", ctx.user_id, quarantine.review, library, item,
                          what="reviewing the import")
