"""Team management shared by ``iris team`` and ``/team``: each function acts as ``actor`` (a
user id), lets the store check the actor's role, and returns the line to show."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from core.errors import IrisUsageError

if TYPE_CHECKING:
    from core.store import Store


def account_ref(ref: str) -> str:
    """An invitee's account: ``telegram:42``, ``slack:T1/U9``, or a bare email address."""
    ref = ref.strip()
    if ":" not in ref and "@" in ref:
        ref = f"email:{ref.lower()}"
    from core.store.users import split_account

    split_account(ref)  # IrisUsageError when it is not platform:id
    return ref


def person(store: Store, ref: str) -> str:
    """The user behind ``ref`` (an account or user id); an account new to Iris gets its user
    now, so an invitation made before they ever wrote holds when they do."""
    if ref.startswith("usr_"):
        return store.users.resolve(ref)
    return store.users.for_account(account_ref(ref))


def label(store: Store, user_id: str) -> str:
    accounts = store.users.accounts(user_id)
    return accounts[0] if accounts else user_id


def create(store: Store, actor: str, name: str) -> str:
    team = store.teams.create(actor, name)
    return f"Team {team.name} created; you are its owner."


def add(store: Store, actor: str, team: str, who: str, role: str = "member") -> str:
    found = store.teams.find(actor, team)
    store.teams.add(actor, found.id, person(store, who), role)
    return f"{who} joined {found.name} as {role}."


def remove(store: Store, actor: str, team: str, who: str | None = None) -> str:
    found = store.teams.find(actor, team)
    target = actor if who is None else person(store, who)
    store.teams.remove(actor, found.id, target)
    if target == actor:
        return f"You left {found.name}; its notes and skills are gone from your prompts."
    return f"{who} was removed from {found.name}."


def set_role(store: Store, actor: str, team: str, who: str, role: str) -> str:
    found = store.teams.find(actor, team)
    store.teams.set_role(actor, found.id, person(store, who), role)
    return f"{who} is now {role} of {found.name}."


def listing(store: Store, actor: str) -> str:
    mine = store.teams.of_user(actor)
    if not mine:
        return "You are in no team. /team create NAME starts one."
    lines = []
    for team, role in mine:
        members = store.teams.members(actor, team.id)
        names = ", ".join(f"{label(store, m.user_id)} ({m.role})" for m in members)
        lines.append(f"{team.name} — you: {role}; members: {names}")
    return "\n".join(lines)


def notes(store: Store, actor: str, team: str) -> str:
    found = store.teams.find(actor, team)
    live = store.team_notes.live(actor, found.id)
    lines = [f"{n.id} [{label(store, n.author)}] {n.content}" for n in live]
    return "\n".join([f"Team notes of {found.name}:", *(lines or ["(none)"])])


def pending(store: Store, actor: str, team: str) -> str:
    found = store.teams.find(actor, team)
    held = store.team_notes.pending(actor, found.id)
    lines = [f"{n.id} [{label(store, n.author)}; {n.reason}] {n.content}" for n in held]
    return "\n".join([f"Held for approval in {found.name}:", *(lines or ["(none)"])])


def decide(store: Store, actor: str, team: str, note_id: str, approve: bool) -> str:
    from core.teams.notes import approve_note

    found = store.teams.find(actor, team)
    if approve:
        approve_note(store, actor, found.id, note_id)
        return f"Note {note_id} is now one of {found.name}'s notes."
    store.team_notes.decide(actor, found.id, note_id, False)
    return f"Note {note_id} rejected."


def audit(store: Store, actor: str, team: str, limit: int = 30) -> str:
    found = store.teams.find(actor, team)
    rows = store.teams.audit(actor, found.id, limit)
    lines = [
        f"{datetime.fromtimestamp(a.at, UTC):%Y-%m-%d %H:%M} {label(store, a.actor)} "
        f"{a.action} {a.detail}"
        for a in rows
    ]
    return "\n".join([f"Audit log of {found.name} (newest first):", *lines])


def need_args(args: list[str], count: int, usage: str) -> None:
    if len(args) < count:
        raise IrisUsageError(usage)
