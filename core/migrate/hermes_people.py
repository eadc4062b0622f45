"""Hermes' platform identities as Iris accounts and scopes.

A Hermes home is one person's agent. Its gateway sessions carry where they happened
(``source`` telegram/slack/discord/…, ``user_id``, ``chat_id``, ``chat_type``, ``thread_id``):

- the person's own accounts (on each platform: an account the importing user already has, else
  the account with the most private sessions) are attached to the importing user and approved,
  so the same person writing to Iris lands in their imported history;
- other people who talked to the gateway privately (approved users) get their own Iris user,
  approved, with their own sessions — never mixed into the person's history;
- group chats become Iris group scopes (``telegram:group:<chat>``), as live group chats do;
- the gateway's approved users (``pairing/<platform>-approved.json``) become approved accounts.

Telegram and Slack have Iris platforms; a Slack account needs its workspace id (``--slack-team``),
which Hermes does not record. Sessions from platforms Iris lacks (Discord, WhatsApp, …) keep
their history (searchable) under the person, with no account mapped."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.errors import NotFound

if TYPE_CHECKING:
    from core.migrate.context import ImportContext
    from core.migrate.hermes_state import HermesSession

PRIVATE = {"dm", "private", "direct", "im"}
GROUPS = {"group", "supergroup", "channel", "thread", "mpim", "guild"}
PAIRING_DIRS = ("platforms/pairing", "pairing")


@dataclass(frozen=True)
class Place:
    platform: str  # the Iris platform of the chat (telegram, slack) or "import"
    chat_key: str
    is_group: bool
    person: str | None  # the sender's Iris account, when it can be named
    group: str | None  # the group scope's account, for group chats
    note: str | None = None  # why an identity could not be mapped


def _private(session: HermesSession, chat: str | None, dm_prefix: str | None = None) -> bool:
    kind = (session.chat_type or "").lower()
    if kind in PRIVATE:
        return True
    if kind in GROUPS:
        return False
    if chat is None:
        return True
    if dm_prefix is not None:
        return chat.startswith(dm_prefix)
    return not chat.startswith("-") and (session.user_id is None or chat == session.user_id)


def place_of(session: HermesSession, slack_team: str | None) -> Place:
    source, thread = session.source, session.thread_id
    if source == "telegram":
        chat = session.chat_id or session.user_id
        if chat is None:
            return Place("import", "hermes:telegram", False, None, None,
                         "telegram session without a chat id")
        private = _private(session, chat)
        key = f"telegram:{chat}" + (f":{thread}" if thread else "")
        person = f"telegram:{session.user_id}" if session.user_id else (
            f"telegram:{chat}" if private else None)
        return Place("telegram", key, not private, person,
                     None if private else f"telegram:group:{chat}")
    if source == "slack":
        chat = session.chat_id
        if chat is None:
            return Place("import", "hermes:slack", False, None, None,
                         "slack session without a channel id")
        private = _private(session, chat, dm_prefix="D")
        key = f"slack:{chat}" + (f":{thread}" if thread else "")
        person = f"slack:{slack_team}/{session.user_id}" if slack_team and session.user_id \
            else None
        note = None if person or not session.user_id else (
            "Slack accounts need the workspace id: rerun with --slack-team T…")
        return Place("slack", key, not private, person,
                     None if private else f"slack:group:{chat}", note)
    chat = session.chat_id or session.user_id
    key = f"hermes:{source}" + (f":{chat}" if chat else "")
    note = None if source in ("cli", "tui", "api", "api_server", "acp", "cron", "unknown") \
        else f"Iris has no {source} platform: history kept, account not mapped"
    return Place("import", key, False, None, None, note)


class People:
    """Decides whose scope each session belongs to, attaching and approving accounts."""

    def __init__(self, ctx: ImportContext, places: list[tuple[HermesSession, Place]]):
        self.ctx = ctx
        self.own: set[str] = set()
        self.owner_of_account: dict[str, str] = {}
        mine = set(ctx.store.users.accounts(ctx.user_id))
        private: Counter[str] = Counter(p.person for _, p in places if p.person and not p.is_group)
        for platform in ("telegram", "slack"):
            have = [a for a in mine if a.startswith(f"{platform}:") and ":group:" not in a]
            if have:
                self.own.update(have)
                continue
            seen = [(n, a) for a, n in private.items() if a.startswith(f"{platform}:")]
            if seen:
                self.own.add(max(seen)[1])

    def scope(self, place: Place, display_name: str | None) -> str:
        """The Iris user whose history this session joins."""
        if place.group is not None:
            return self._account_user(place.group, kind="group", display_name=None)
        if place.person is None or place.person in self.own:
            if place.person is not None:
                self.link(place.person, display_name)
            return self.ctx.user_id
        return self._account_user(place.person, kind="person", display_name=display_name)

    def _account_user(self, account: str, *, kind: str, display_name: str | None) -> str:
        if account in self.owner_of_account:
            return self.owner_of_account[account]
        store, report = self.ctx.store, self.ctx.report
        try:
            user = store.users.resolve(account)
            fresh = False
        except NotFound:
            fresh = True
            user = f"(new {kind} for {account})" if self.ctx.dry_run else \
                store.users.for_account(account, kind=kind, display_name=display_name)
        state = None if fresh else store.access.state(account)
        if not fresh and (kind == "group" or (state is not None and state.approved)):
            report.count("people", "accounts already there")
        elif kind == "person":
            if not self.ctx.dry_run:
                store.access.approve(account, by="import-hermes")
            report.taken("people", f"{account}{f' ({display_name})' if display_name else ''}: "
                         f"{'a new' if fresh else 'the existing'} Iris user of their own, "
                         "approved, with their own sessions")
        else:
            report.taken("people", f"{account}: group scope "
                         f"{'created' if fresh else 'already there'}")
        self.owner_of_account[account] = user
        return user

    def link(self, account: str, display_name: str | None = None) -> bool:
        """Attach one of the person's accounts to the importing user (approved)."""
        if account in self.owner_of_account:
            return self.owner_of_account[account] == self.ctx.user_id
        store, report = self.ctx.store, self.ctx.report
        try:
            owner = store.users.resolve(account)
        except NotFound:
            owner = None
        if owner is not None and owner != self.ctx.user_id:
            report.refused("people", f"{account} already belongs to Iris user {owner}: not "
                           f"moved (import with --user {account}, or /link the two first)")
            self.owner_of_account[account] = owner
            return False
        state = store.access.state(account) if owner is not None else None
        if state is not None and state.approved:
            report.count("people", "accounts already linked")
            self.owner_of_account[account] = self.ctx.user_id
            return True
        if not self.ctx.dry_run:
            if owner is None:
                store.users.attach(account, self.ctx.user_id)
            store.access.approve(account, by="import-hermes")
        report.taken("people", f"{account}: linked to {self.ctx.user_id} and approved"
                     if owner is None else f"{account}: already this user's; approved")
        self.owner_of_account[account] = self.ctx.user_id
        return True

    def approved_users(self) -> None:
        """The gateway's paired users: approved accounts (the person's own, or their own)."""
        home, report = self.ctx.home, self.ctx.report
        seen: set[str] = set()
        for folder in PAIRING_DIRS:
            for path in sorted((home / folder).glob("*-approved.json")):
                platform = path.name.removesuffix("-approved.json").lower()
                try:
                    data = json.loads(path.read_text(encoding="utf-8-sig"))
                except (OSError, ValueError) as exc:
                    report.refused("people", f"{folder}/{path.name}: unreadable ({exc})")
                    continue
                if not isinstance(data, dict):
                    report.refused("people", f"{folder}/{path.name}: not a JSON object")
                    continue
                for uid, info in data.items():
                    name = info.get("user_name") if isinstance(info, dict) else None
                    if platform == "telegram":
                        account = f"telegram:{uid}"
                    elif platform == "slack" and self.ctx.slack_team:
                        account = f"slack:{self.ctx.slack_team}/{uid}"
                    else:
                        why = "needs --slack-team" if platform == "slack" else \
                            f"Iris has no {platform} platform"
                        report.skipped("people", f"approved {platform} user {uid}: {why}")
                        continue
                    if account in seen:
                        continue
                    seen.add(account)
                    if account in self.own:
                        self.link(account, name or None)
                    else:
                        self._account_user(account, kind="person", display_name=name or None)
