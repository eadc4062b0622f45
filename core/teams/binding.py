"""Binding a group chat or a Slack workspace to a team (``/team bind``), and joining the teams
bound where a person writes (called by the worker before each turn of a group chat or Slack)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.errors import IrisUsageError, NotFound
from core.store.team_bindings import workspace_place

if TYPE_CHECKING:
    from core.store import Store


def _place(store: Store, chat_user: str, account: str, what: str) -> tuple[str, str]:
    """(place, label) for ``/team bind TEAM [workspace]`` sent by ``account`` in the chat owned
    by ``chat_user`` (a group's scope, or the person in a direct chat)."""
    if what == "workspace":
        place = workspace_place(account)
        if place is None:
            raise IrisUsageError("only a Slack workspace can be bound as a whole")
        return place, f"Slack workspace {place.split(':', 1)[1]}"
    if what:
        raise IrisUsageError("usage: /team bind TEAM (in the group), or /team bind TEAM "
                             "workspace (on Slack)")
    group = store.users.get(chat_user)
    if group.kind != "group":
        raise IrisUsageError("send /team bind TEAM in the group chat to bind (or, on Slack, "
                             "/team bind TEAM workspace)")
    return chat_user, f"group {group.display_name or chat_user}"


def bind(store: Store, chat_user: str, account: str, team: str, what: str = "") -> str:
    person = store.users.resolve(account)
    found = store.teams.find(person, team)
    place, label = _place(store, chat_user, account, what.lower())
    store.team_bindings.bind(person, found.id, place, label)
    return (f"{label} is bound to {found.name}: whoever may talk to Iris and writes here joins "
            f"{found.name} as a member.")


def unbind(store: Store, chat_user: str, account: str, team: str, what: str = "") -> str:
    person = store.users.resolve(account)
    found = store.teams.find(person, team)
    place, label = _place(store, chat_user, account, what.lower())
    store.team_bindings.unbind(person, found.id, place)
    return f"{label} is no longer bound to {found.name}; its members stay members."


def places_of(chat_user: str, chat_kind: str, account: str) -> list[str]:
    """Where a message from ``account`` in the chat owned by ``chat_user`` was written."""
    places = [chat_user] if chat_kind == "group" else []
    if (workspace := workspace_place(account)) is not None:
        places.append(workspace)
    return places


def join_where_written(store: Store, chat_user: str, chat_kind: str, account: str) -> list[str]:
    """Teams the sender joined now by writing in a bound place (usually none: one query)."""
    places = places_of(chat_user, chat_kind, account)
    if not places:
        return []
    try:
        person = store.users.resolve(account)
    except NotFound:  # not someone Iris knows (yet): nothing to join
        return []
    return store.team_bindings.join_from(person, places)
