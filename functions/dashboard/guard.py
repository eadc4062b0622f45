"""Who is asking: the session behind the cookie, the CSRF token on every form, and the wall
between users (another user's page is a 404, an owner page a 403 for everyone else)."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from core.dashboard.signin import csrf_ok, session_for
from core.store.dashboard import DashboardSession
from functions.runtime import Runtime

COOKIE = "iris_ui"


class SignInNeeded(Exception):
    """No live session: the page says how to get a link."""


@dataclass(frozen=True)
class Viewer:
    session: DashboardSession
    user_id: str
    is_owner: bool
    display: str

    @property
    def csrf(self) -> str:
        return self.session.csrf


def runtime(request: Request) -> Runtime:
    rt: Runtime = request.app.state.runtime
    return rt


def viewer(request: Request) -> Viewer:
    rt = runtime(request)
    session = session_for(rt.store, request.cookies.get(COOKIE))
    if session is None:
        raise SignInNeeded()
    user = rt.store.users.get(session.user_id)
    accounts = rt.store.users.accounts(user.id)
    display = user.display_name or (accounts[0] if accounts else user.id)
    return Viewer(session=session, user_id=user.id, is_owner=session.is_owner, display=display)


def own(request: Request) -> Viewer:
    """The viewer, when the page's ``{user}`` is theirs; 404 otherwise (no hint it exists)."""
    seen = viewer(request)
    if request.path_params.get("user") != seen.user_id:
        raise HTTPException(404, "no such page")
    return seen


def owner(request: Request) -> Viewer:
    seen = viewer(request)
    if not seen.is_owner:
        raise HTTPException(403, "only the owner of this Iris sees this page")
    return seen


def same_origin(request: Request) -> bool:
    """A browser's POST says where it came from (Sec-Fetch-Site, Origin or Referer): this
    site, or it is refused."""
    fetched = request.headers.get("sec-fetch-site")
    if fetched is not None and fetched != "same-origin":
        return False
    sent = request.headers.get("origin") or request.headers.get("referer")
    if not sent or sent == "null":
        return False
    parts = urlsplit(sent)
    return parts.netloc == request.headers.get("host", "")


def form_checked(request: Request, seen: Viewer, form: Any) -> None:
    """Every state-changing request: same origin and the session's CSRF token."""
    token = form.get("csrf") if form is not None else None
    token = token or request.headers.get("x-csrf-token")
    if not same_origin(request) or not csrf_ok(seen.session, token):
        raise HTTPException(403, "this form is stale or came from another site; reload the page")


def secure(request: Request) -> bool:
    proto = request.headers.get("x-forwarded-proto", request.url.scheme)
    return proto.split(",")[0].strip() == "https"


def _sign(seen: Viewer, text: str) -> str:
    return hmac.new(seen.csrf.encode(), text.encode(), hashlib.sha256).hexdigest()[:32]


def back(request: Request, seen: Viewer, where: str, notice: str | None = None) -> Response:
    """Post/redirect/get: back to ``where`` (under /ui), with a notice only this session's
    pages show (signed with its CSRF secret, so a crafted address cannot put words there)."""
    base = request.scope.get("root_path", "").rstrip("/")
    url = f"{base}{where}"
    if notice:
        notice = notice[:500]
        url += ("&" if "?" in url else "?") + urlencode({"n": notice, "s": _sign(seen, notice)})
    return RedirectResponse(url, status_code=303)


def notice(request: Request, seen: Viewer) -> str | None:
    text, sig = request.query_params.get("n"), request.query_params.get("s")
    if text and sig and hmac.compare_digest(sig, _sign(seen, text)):
        return text
    return None
