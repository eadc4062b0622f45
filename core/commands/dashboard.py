"""``/dashboard``: a one-time link to the web dashboard; ``/dashboard logout`` signs out
everywhere."""

from __future__ import annotations

from core.commands import CommandContext, CommandResult, command
from core.dashboard.signin import issue_link, revoke_all
from core.errors import IrisUsageError
from core.identity.accounts import clock


@command("dashboard", "a one-time sign-in link to your web dashboard; /dashboard logout")
def dashboard(ctx: CommandContext, args: str) -> CommandResult:
    verb = args.strip().lower()
    if verb == "logout":
        count = revoke_all(ctx.store, ctx.user_id)
        return CommandResult(reply=f"Signed out of the dashboard everywhere ({count} session"
                             f"{'' if count == 1 else 's'} ended).")
    if verb:
        return CommandResult(reply="Usage: /dashboard (a sign-in link) | /dashboard logout")
    try:
        link = issue_link(ctx.store, ctx.user_id, is_owner=ctx.is_owner, issued_by=ctx.account,
                          base_url=ctx.settings.public_url)
    except IrisUsageError as exc:
        return CommandResult(reply=f"No dashboard link: {exc}.")
    return CommandResult(
        reply=f"Your dashboard sign-in link (works once, until {clock(link.expires_at)}):\n"
        f"{link.url}\nDon't share it: whoever opens it first sees your memory and chats."
    )
