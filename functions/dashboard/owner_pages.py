"""The owner's pages (403 for everyone else): users and pairing requests, held commands,
held commands (approve, deny), deliveries failing or given up, settings with secrets
masked."""

from __future__ import annotations

from dataclasses import replace

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from core.identity.pairing import Pairing
from core.messages import InboundMessage
from core.store.acting import HeldCommand
from functions.dashboard.guard import Viewer, back, form_checked, notice, owner, runtime
from functions.dashboard.web import MAX_FORM_FIELD, page, render
from functions.ingress import receive
from functions.runtime import Runtime

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
    return render(request, "owner_held.html", viewer=seen, notice=notice(request, seen),
                  rows=rows)


async def held_decide(request: Request) -> Response:
    """Approve: ``/approve N`` is sent into the chat the command was held in, as the account
    that asked (the command runs there once, and the model reports its result in that chat,
    exactly as if they had typed it). Deny: dropped, as ``/approve deny N`` does."""
    form = await request.form(max_files=0, max_fields=10, max_part_size=MAX_FORM_FIELD)
    seen = await run_in_threadpool(owner, request)
    form_checked(request, seen, form)
    rt = runtime(request)
    user_id = str(form.get("user") or "")
    number = str(form.get("number") or "")
    if not number.isdigit():
        raise HTTPException(400, "which held command?")
    held = await run_in_threadpool(rt.store.held.get, user_id, int(number))
    if held is None:
        raise HTTPException(404, "no such held command")
    label = f"#{held.number} of {user_id}"
    if form.get("decision") == "deny":
        denied = await run_in_threadpool(rt.store.held.deny, user_id, held.number)
        return back(request, seen, "/owner/held", f"Denied held command {label}; it will not "
                    "run." if denied else f"Held command {label} was decided already or expired.")
    if form.get("decision") != "approve":
        raise HTTPException(400, "approve or deny?")
    if held.status != "pending" or held.expires_at <= rt.store.clock.now():
        return back(request, seen, "/owner/held",
                    f"Held command {label} was decided already or expired.")
    message = await run_in_threadpool(_approval_message, rt, held)
    await receive(rt, message, owner=user_id)
    return back(request, seen, "/owner/held", f"Approved held command {label}: it runs in its "
                "chat, and Iris reports the result there.")


def _approval_message(rt: Runtime, held: HeldCommand) -> InboundMessage:
    """The chat's last message, re-addressed: ``/approve N`` from the account that asked."""
    store = rt.store
    found = store.inbox.latest_messages(held.user_id, limit=1, chat_key=held.chat_key)
    last = found[0] if found else None
    accounts = store.users.accounts(held.user_id)
    account = held.requested_by or (accounts[0] if accounts else f"http:{held.user_id}")
    if last is None:  # a held command comes from a turn, so its chat has a message
        raise HTTPException(409, "the chat this command was held in has no messages left")
    return replace(last, account=account, text=f"/approve {held.number}",
                   platform_message_id=f"dashboard:approve:{held.user_id}:{held.number}",
                   session_hint=held.session_id, attachments=(), display_name=None, cron=None)


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
        Route("/owner/held/decide", held_decide, methods=["POST"]),
        Route("/owner/deliveries", page(deliveries_page), methods=["GET"]),
        Route("/owner/settings", page(settings_page), methods=["GET"]),
    ]
