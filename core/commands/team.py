"""``/team``: teams from chat. Anyone may create one (and owns it); admins invite by account
(``telegram:42``, ``slack:T1/U9``, an email address); members read the notes and leave. In a
group chat the sender acts, and only what the group may see is shown (``core.teams.acting``)."""

from __future__ import annotations

import re

from core.commands import CommandContext, CommandResult, command
from core.errors import IrisUsageError
from core.lanes import blocking
from core.teams import manage, skills
from core.teams.acting import Actor, actor, check_shown_here

USAGE = (
    "Usage: /team | /team create NAME | /team add TEAM ACCOUNT [member|admin|owner] | "
    "/team remove TEAM ACCOUNT | /team leave TEAM | /team role TEAM ACCOUNT ROLE | "
    "/team notes TEAM | /team pending TEAM | /team approve TEAM NOTE | /team reject TEAM NOTE "
    "| /team audit TEAM | /team bind TEAM [workspace] | /team unbind TEAM [workspace] "
    "| /team skills TEAM | /team approve|reject TEAM SKILL [VERSION] | "
    "/team rollback TEAM SKILL [VERSION] (TEAM may be left out when you are in one team). "
    "/remember team: TEXT adds a team note; "
    "/skills share NAME [TEAM] proposes one of your skills."
)


TEAM_OPTIONAL = ("skills", "approve", "reject", "rollback")
VERSION = re.compile(r"[vV]?\d+")


def with_team(ctx: CommandContext, who: Actor, verb: str, rest: list[str]) -> list[str]:
    """``rest`` with the team named first. A person in exactly one team (or, in a group, one
    of the teams bound there) may leave it out: ``/team skills``, ``/team approve pg-backup
    [2]``, ``/team rollback pg-backup [1]``."""
    mine = who.bound_here(ctx.store) or [team.name for team, _ in ctx.store.teams.of_user(
        who.user_id)]
    if len(mine) != 1 or (rest and rest[0].lower() in mine):
        return rest
    versioned = len(rest) == 2 and VERSION.fullmatch(rest[1]) is not None
    if (verb == "skills" and not rest) or (verb != "skills" and (len(rest) == 1 or versioned)):
        return [mine[0], *rest]
    return rest


def dispatch(ctx: CommandContext, words: list[str]) -> str:
    store = ctx.store
    who = actor(store, ctx.user_id, ctx.account)
    me = who.user_id
    if not words and who.group is not None:
        here = who.bound_here(store)
        return (f"Teams bound to this group that you are in: {', '.join(here)}." if here else
                "No team you are in is bound to this group. /team in a direct chat lists "
                "yours; an admin binds a team here with /team bind TEAM.")
    if not words:
        return manage.listing(store, me)
    verb, rest = words[0].lower(), words[1:]
    arity = {
        "create": 1,
        "add": 2,
        "remove": 2,
        "leave": 1,
        "role": 3,
        "notes": 1,
        "pending": 1,
        "approve": 2,
        "reject": 2,
        "audit": 1,
        "bind": 1,
        "unbind": 1,
        "skills": 1,
        "rollback": 2,
    }
    if verb in TEAM_OPTIONAL:
        rest = with_team(ctx, who, verb, rest)
    if verb not in arity or len(rest) < arity[verb]:
        return USAGE
    if verb in ("notes", "pending", "audit", "skills"):
        check_shown_here(store, who, verb, rest[0])
    if verb == "create":
        return manage.create(store, me, rest[0])
    if verb == "add":
        return manage.add(store, me, rest[0], rest[1], rest[2] if len(rest) > 2 else "member")
    if verb == "remove":
        return manage.remove(store, me, rest[0], rest[1])
    if verb == "leave":
        return manage.remove(store, me, rest[0])
    if verb == "role":
        return manage.set_role(store, me, rest[0], rest[1], rest[2])
    if verb == "notes":
        return manage.notes(store, me, rest[0])
    if verb == "pending":
        return manage.pending(store, me, rest[0])
    if verb in ("bind", "unbind"):
        from core.teams import binding

        act = binding.bind if verb == "bind" else binding.unbind
        return act(store, ctx.user_id, ctx.account, rest[0], rest[1] if len(rest) > 1 else "")
    if verb == "skills":
        return skills.review(store, me, rest[0])
    if verb == "rollback":
        return skills.rollback(store, me, rest[0], rest[1], rest[2] if len(rest) > 2 else None)
    if verb in ("approve", "reject") and not rest[1].startswith("tnote_"):
        version = rest[2] if len(rest) > 2 else None
        return skills.decide(store, me, rest[0], rest[1], verb == "approve", version)
    if verb in ("approve", "reject"):
        return manage.decide(store, me, rest[0], rest[1], verb == "approve")
    return manage.audit(store, me, rest[0])


@command(
    "team",
    "teams: /team (yours), /team create NAME, /team add TEAM ACCOUNT, /team leave "
    "TEAM, /team notes TEAM, /team approve TEAM NOTE …",
)
async def team(ctx: CommandContext, args: str) -> CommandResult:
    try:
        reply = await blocking("store", ctx.user_id, dispatch, ctx, args.split(),
                               what="a team command")
        return CommandResult(reply=reply)
    except IrisUsageError as exc:
        return CommandResult(reply=f"Nothing changed: {exc}")
