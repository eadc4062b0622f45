"""Who may talk to Iris. Webhooks call ``check_access`` before recording a message.

Per platform (``telegram_access``, ``slack_access``): ``pairing`` (default: an unknown account
gets a code for the owner to approve), ``allowlist`` (only listed accounts), ``open`` (anyone).
HTTP API callers are trusted through the API's bearer key. Owners (``owner_accounts``), listed
accounts, approved accounts and accounts linked to an approved user are always let in. A
``/link CODE`` message with a valid code is let in so a new account can join its person.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.identity.accounts import AccountAccess, clock
from core.identity.codes import normalize
from core.identity.linking import Links
from core.identity.pairing import MAX_PENDING_PER_PLATFORM, Pairing
from core.identity.pairing_notice import tell_owners
from core.messages import InboundMessage
from core.platforms.registry import PLATFORMS

if TYPE_CHECKING:
    from core.config import Settings
    from core.store import Store

LINK_RE = re.compile(r"^/link(?:@\S+)?\s+(?P<code>\S.*)$", re.I | re.S)
NOT_ALLOWED = "Sorry, this Iris is private and you are not on its list of allowed users."


@dataclass(frozen=True)
class AccessDecision:
    allowed: bool
    reply: str | None = None  # what to answer when not allowed (None: stay silent)
    user_id: str | None = None  # the sender's user when allowed
    # deliveries recorded on the way (user_id, delivery_id) for the webhook to send now: the
    # owners' notice that pairing requests are being dropped
    notices: tuple[tuple[str, int], ...] = ()


def policy(settings: Settings, platform: str) -> str:
    return getattr(settings, f"{platform}_access", "pairing")


def allow_listed(settings: Settings, account: str) -> bool:
    platform, _, ident = account.partition(":")
    listed = set(getattr(settings, f"{platform}_allow", []) or [])
    candidates = {account, ident, ident.rsplit("/", 1)[-1]}
    return bool(listed & candidates)


def is_owner_account(settings: Settings, account: str) -> bool:
    return account in set(settings.owner_accounts)


def _allowed(store: Store, settings: Settings, message: InboundMessage) -> AccessDecision:
    user_id = store.users.for_account(message.account, display_name=message.display_name)
    if is_owner_account(settings, message.account):
        store.users.make_owner(user_id)
    return AccessDecision(allowed=True, user_id=user_id)


def _known_and_approved(store: Store, settings: Settings, account: str) -> bool:
    if is_owner_account(settings, account) or allow_listed(settings, account):
        return True
    state = store.access.state(account)
    return state is not None and state.approved


def pairing_reply(code: str, expires_at: float) -> str:
    return (
        f"Hi! I don't know you yet. Your pairing code is {code} (valid until "
        f"{clock(expires_at)}). Ask the owner of this Iris to approve it with "
        f"`iris pairing approve {code}` or `/approve {code}`. If you already use Iris on "
        "another app, send /link there and then `/link CODE` here instead."
    )


def check_access(store: Store, settings: Settings, message: InboundMessage) -> AccessDecision:
    """Decide whether ``message`` may be recorded and answered, and what to say if not.

    Allowed senders get their user id (created with the account on first contact). In a group
    an unknown sender is ignored silently (codes are handed out in private chats only)."""
    platform = message.platform
    if PLATFORMS[platform].trusted or policy(settings, platform) == "open":
        return _allowed(store, settings, message)
    if _known_and_approved(store, settings, message.account):
        return _allowed(store, settings, message)
    if message.is_group:
        return AccessDecision(allowed=False)
    link = LINK_RE.match(message.text.strip())
    if link:
        return _link_attempt(store, settings, message, normalize(link["code"]))
    if policy(settings, platform) == "allowlist":
        return AccessDecision(allowed=False, reply=NOT_ALLOWED)
    state = store.access.state(message.account)
    if state and state.locked_until and state.locked_until > store.clock.now():
        return _locked(state.locked_until)
    issued = Pairing(store).request(message)
    notices: list[tuple[str, int]] = []
    if issued.dropped is not None:
        notices = tell_owners(store, settings, platform, issued.dropped, MAX_PENDING_PER_PLATFORM)
    request = issued.request
    return AccessDecision(allowed=False, reply=pairing_reply(request.code, request.expires_at),
                          notices=tuple(notices))


def _link_attempt(
    store: Store, settings: Settings, message: InboundMessage, code: str
) -> AccessDecision:
    store.users.for_account(message.account, display_name=message.display_name)
    access = AccountAccess(store)
    state = store.access.state(message.account)
    if state and state.locked_until and state.locked_until > store.clock.now():
        return _locked(state.locked_until)
    if Links(store).is_valid(code):
        return _allowed(store, settings, message)
    error = access.fail(message.account, f"{code!r} is not a valid link code")
    return AccessDecision(allowed=False, reply=f"Could not link: {error}.")


def _locked(until: float) -> AccessDecision:
    return AccessDecision(
        allowed=False, reply=f"Too many failed attempts. Try again after {clock(until)}."
    )
