"""The owner's pages (403 for everyone else): users and pairing requests, held commands,
deliveries failing or given up, settings with secrets masked."""

from __future__ import annotations

from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from core.identity.pairing import Pairing
from functions.dashboard.guard import Viewer, back, form_checked, notice, owner, runtime
from functions.dashboard.web import page, render

MAX_USERS = 500


def _approver(request: Request, seen: Viewer) -> str:
    """The account decisions are recorded against: the owner's own."""
    accounts = runtime(request).store.users.accounts(seen.user_id)
    return accounts[0] if accounts else f"http:{seen.user_id}"


def users_page(request: Request, form: FormData | None) -> Response:
    seen = owner(request)
    store = runtime(request).store
    users = [u for u in store.users.list_all() if u.merged_into is None][:MAX_USERS]
    rows = [{"user": u, "accounts": store.users.accounts(u.id)} for u in users]
    return render(request, "owner_users.html", viewer=seen, notice=notice(request, seen),
                  rows=rows, pairing=Pairing(store).list())


def pairing_decide(request: Request, form: FormData | None) -> Response:
    seen = owner(request)
    form_checked(request, seen, form)
    assert form is not None
    pairing = Pairing(runtime(request).store)
    code = str(form.get("code") or "")
    if form.get("decision") == "approve":
        approved = pairing.approve(code, by=_approver(request, seen))
        message = f"Approved {approved.account}."
    elif form.get("decision") == "deny":
        message = pairing.revoke(code, by=_approver(request, seen))
    else:
        raise HTTPException(400, "approve or deny?")
    return back(request, seen, "/owner/users", message)


def held_page(request: Request, form: FormData | None) -> Response:
    seen = owner(request)
    store = runtime(request).store
    at = store.clock.now()
    rows = [(u, held) for u in store.users.list_all()[:MAX_USERS]
            for held in store.held.pending(u.id, at=at)]
    return render(request, "owner_held.html", viewer=seen, rows=rows)


def deliveries_page(request: Request, form: FormData | None) -> Response:
    seen = owner(request)
    store = runtime(request).store
    rows = [d for u in store.users.list_all()[:MAX_USERS]
            for d in store.deliveries.troubled(u.id, limit=20)]
    rows.sort(key=lambda d: d.created_at, reverse=True)
    return render(request, "owner_deliveries.html", viewer=seen, rows=rows[:200])


def settings_page(request: Request, form: FormData | None) -> Response:
    seen = owner(request)
    values = runtime(request).settings.masked()
    return render(request, "owner_settings.html", viewer=seen,
                  values=sorted((k, repr(v) if not isinstance(v, str) else v)
                                for k, v in values.items()))


def routes() -> list[Route]:
    return [
        Route("/owner/users", page(users_page), methods=["GET"]),
        Route("/owner/pairing", page(pairing_decide), methods=["POST"]),
        Route("/owner/held", page(held_page), methods=["GET"]),
        Route("/owner/deliveries", page(deliveries_page), methods=["GET"]),
        Route("/owner/settings", page(settings_page), methods=["GET"]),
    ]
