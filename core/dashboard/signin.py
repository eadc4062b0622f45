"""Signing in to the dashboard without a password.

A chat command or the CLI issues a one-time link (10 minutes, single use); opening it and
pressing the button exchanges it for a server-side session held in a cookie. Only SHA-256
hashes of link and session tokens are stored; the session also carries a CSRF token for its
forms. Every lifetime is measured on the store's clock."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote

from core.errors import IrisUsageError
from core.ids import new_id
from core.store.dashboard import DashboardSession

if TYPE_CHECKING:
    from core.store import Store

LINK_SECONDS = 10 * 60
SESSION_SECONDS = 30 * 24 * 3600
LOCAL_BASE_URL = "http://127.0.0.1:8787"  # `iris dev`'s default address
SIGNIN_PATH = "/ui/signin"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class IssuedLink:
    token: str
    url: str
    user_id: str
    is_owner: bool
    expires_at: float


@dataclass(frozen=True)
class NewSession:
    token: str  # goes in the cookie; only its hash is stored
    session: DashboardSession


class LinkRefused(IrisUsageError):
    """A sign-in link that is unknown, used or expired."""


def signin_url(base_url: str | None, token: str) -> str:
    base = (base_url or LOCAL_BASE_URL).rstrip("/")
    return f"{base}{SIGNIN_PATH}?t={quote(token)}"


def issue_link(store: Store, user_id: str, *, is_owner: bool, issued_by: str,
               base_url: str | None) -> IssuedLink:
    """A one-time sign-in link for ``user_id`` (an owner session when ``is_owner``)."""
    user = store.users.get(user_id)
    if user.kind == "group":
        raise IrisUsageError("a group has no dashboard: send /dashboard in a private chat")
    token = secrets.token_urlsafe(32)
    now = store.clock.now()
    expires_at = now + LINK_SECONDS
    store.dashboard.add_link(token_hash(token), user_id=user.id, is_owner=is_owner,
                             issued_by=issued_by, at=now, expires_at=expires_at)
    return IssuedLink(token=token, url=signin_url(base_url, token), user_id=user.id,
                      is_owner=is_owner, expires_at=expires_at)


def redeem(store: Store, token: str, *, user_agent: str | None = None) -> NewSession:
    """Spend a link (once) and open a session; LinkRefused says why not."""
    hashed = token_hash(token)
    now = store.clock.now()
    row = store.dashboard.use_link(hashed, at=now)
    if row is None:
        known = store.dashboard.link_state(hashed)
        if known is None:
            raise LinkRefused("this sign-in link is not valid")
        if known["used_at"] is not None:
            raise LinkRefused("this sign-in link was used already; send /dashboard for a new one")
        raise LinkRefused("this sign-in link has expired (links last 10 minutes); send "
                          "/dashboard for a new one")
    session_token = secrets.token_urlsafe(32)
    session_id = new_id("dsh")
    store.dashboard.add_session(
        session_id, token_hash(session_token), user_id=row["user_id"],
        is_owner=bool(row["is_owner"]), csrf=secrets.token_urlsafe(24),
        user_agent=(user_agent or "")[:200] or None, at=now, expires_at=now + SESSION_SECONDS,
    )
    session = store.dashboard.live_session(token_hash(session_token), at=now)
    assert session is not None
    return NewSession(token=session_token, session=session)


def session_for(store: Store, token: str | None) -> DashboardSession | None:
    """The live session a cookie holds, or None (unknown, revoked or expired)."""
    if not token or len(token) > 200:
        return None
    now = store.clock.now()
    session = store.dashboard.live_session(token_hash(token), at=now)
    if session is not None and now - session.last_seen_at > 60:
        store.dashboard.seen(session.user_id, session.id, at=now)
    return session


def csrf_ok(session: DashboardSession, sent: str | None) -> bool:
    return bool(sent) and hmac.compare_digest(session.csrf.encode(), (sent or "").encode())


def sessions(store: Store, user_id: str | None = None) -> list[DashboardSession]:
    return store.dashboard.sessions(user_id, at=store.clock.now())


def revoke(store: Store, session_id: str, *, user_id: str | None = None) -> bool:
    """Revoke one session (of ``user_id`` when given: a user may revoke only their own)."""
    owner = store.dashboard.session_owner(session_id)
    if owner is None or (user_id is not None and owner != user_id):
        return False
    return store.dashboard.revoke(owner, session_id, at=store.clock.now())


def revoke_all(store: Store, user_id: str) -> int:
    return store.dashboard.revoke_all(user_id, at=store.clock.now())
