"""``/approve``: a pairing code (owners), or a held terminal command (``core.acting.approvals``)."""

from __future__ import annotations

from core.commands import CommandContext, CommandResult, command
from core.commands.held import approve_pending
from core.errors import IrisUsageError
from core.identity.access import is_owner_account
from core.identity.codes import looks_like_code
from core.identity.pairing import Pairing


def is_owner(ctx: CommandContext) -> bool:
    return ctx.is_owner or is_owner_account(ctx.settings, ctx.account)


def approve_pairing(ctx: CommandContext, code: str) -> CommandResult:
    if not is_owner(ctx):
        return CommandResult(reply="Only the owner of this Iris can approve pairing codes.")
    try:
        request = Pairing(ctx.store).approve(code, by=ctx.account)
    except IrisUsageError as exc:
        return CommandResult(reply=f"Not approved: {exc}.")
    who = f"{request.display_name} ({request.account})" if request.display_name else request.account
    return CommandResult(reply=f"Approved {who}. I'll let them know they can talk to me now.")


@command("approve", "approve a pairing code (owner): /approve CODE; or a held command: /approve N")
async def approve(ctx: CommandContext, args: str) -> CommandResult:
    from core.lanes import blocking

    arg = args.strip()
    pairing: bool = bool(arg) and await blocking(
        "store", ctx.user_id, Pairing(ctx.store).is_pending_code, arg, what="/approve")
    if pairing:
        return await blocking("store", ctx.user_id, approve_pairing, ctx, arg, what="/approve")
    result = await approve_pending(ctx, arg)
    if result is not None:
        return result
    if arg and looks_like_code(arg) and is_owner(ctx):
        return await blocking("store", ctx.user_id, approve_pairing, ctx, arg, what="/approve")
    if not arg:
        return CommandResult(reply="Nothing is waiting for approval.")
    return CommandResult(
        reply=f"Nothing to approve for {arg!r}: it is neither a pending pairing code nor a "
        "held command number."
    )
