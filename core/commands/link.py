"""``/link``: connect this account with your account on another platform."""

from __future__ import annotations

from core.commands import CommandContext, CommandResult, command
from core.errors import IrisUsageError
from core.identity.accounts import clock
from core.identity.linking import Links


@command("link", "link your accounts across apps: /link, then /link CODE from the other one")
def link(ctx: CommandContext, args: str) -> CommandResult:
    links = Links(ctx.store)
    code = args.strip()
    try:
        if not code:
            issued = links.issue(ctx.user_id, ctx.account)
            return CommandResult(
                reply=f"Your link code is {issued.code} (valid until {clock(issued.expires_at)}). "
                f"Send `/link {issued.code}` from your other account (Telegram, Slack or the "
                "API) and both will share one memory and history."
            )
        confirmed = links.redeem(code, account=ctx.account, user_id=ctx.user_id)
    except IrisUsageError as exc:
        return CommandResult(reply=f"Could not link: {exc}.")
    return CommandResult(
        reply=f"Linked {ctx.account} with {confirmed.account}: from your next message on, your "
        "memory and conversations are shared across both."
    )
