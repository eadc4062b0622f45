"""Chat: the user's sessions, a new session, and a turn whose answer streams back (the HTTP
API's streaming path: ``functions.http_api.stream_events``)."""

from __future__ import annotations

import uuid

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from core.errors import NotFound
from core.messages import InboundMessage
from functions.dashboard.guard import back, form_checked, notice, own, runtime
from functions.dashboard.web import MAX_FORM_FIELD, page, render
from functions.http_api import WAIT_SECONDS, stream_events, wait_finished
from functions.ingress import receive

CHAT_ID = "dashboard"
CHAT_KEY = f"http:{CHAT_ID}"
CLIENT = "dashboard"  # the label of sessions started here


def chat_page(request: Request, form: FormData | None) -> Response:
    seen = own(request)
    store = runtime(request).store
    sessions = store.sessions.list(seen.user_id, limit=50)
    chosen = request.query_params.get("session") or ""
    current = next((s for s in sessions if s.id == chosen), None)
    if chosen and current is None:
        current = store.sessions.get(seen.user_id, chosen)  # NotFound → 404
    if current is None:
        current = store.sessions.latest(seen.user_id, CHAT_KEY)
    messages = store.messages.for_session(seen.user_id, current.id) if current else []
    shown = [m.message for m in messages if m.message.role in ("user", "assistant")
             and m.message.content.strip()]
    return render(request, "chat.html", viewer=seen, notice=notice(request, seen),
                  sessions=sessions, current=current, messages=shown[-100:])


def new_session(request: Request, form: FormData | None) -> Response:
    seen = own(request)
    form_checked(request, seen, form)
    session = runtime(request).store.sessions.start(seen.user_id, CHAT_KEY, CLIENT)
    return back(request, seen, f"/u/{seen.user_id}/chat?session={session.id}",
                "Started a new session.")


def _inbound(request: Request, user_id: str, form: FormData, *,
             stream: bool) -> InboundMessage:
    rt = runtime(request)
    text = str(form.get("text") or "").strip()
    if not text:
        raise HTTPException(400, "the message is empty")
    if len(text) > rt.settings.max_message_chars:
        raise HTTPException(413, f"the message is over {rt.settings.max_message_chars} "
                            "characters")
    session = str(form.get("session") or "") or None
    if session is not None:
        try:
            rt.store.sessions.get(user_id, session)
        except NotFound:
            raise HTTPException(404, "no such session") from None
    accounts = rt.store.users.accounts(user_id)
    account = accounts[0] if accounts else f"http:{user_id}"
    return InboundMessage(
        platform="http", chat_id=CHAT_ID, account=account,
        platform_message_id=f"dashboard:{user_id}:{uuid.uuid4().hex}", text=text,
        session_hint=session, stream=bool(stream), client=CLIENT,
    )


async def send(request: Request) -> Response:
    """With the page's script (an X-CSRF-Token header): the answer as server-sent events.
    Without: wait for the answer, then back to the chat page."""
    form = await request.form(max_files=0, max_fields=10, max_part_size=MAX_FORM_FIELD)
    seen = await run_in_threadpool(own, request)
    form_checked(request, seen, form)
    rt = runtime(request)
    streams = bool(request.headers.get("x-csrf-token"))
    message = _inbound(request, seen.user_id, form, stream=streams)
    received = await receive(rt, message, owner=seen.user_id)
    if streams:
        return StreamingResponse(
            stream_events(rt, received.user_id, received.entry_id,
                          rt.answers.listen(received.user_id, received.entry_id)),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    entry = await wait_finished(rt, received.user_id, received.entry_id, WAIT_SECONDS)
    where = f"/u/{seen.user_id}/chat"
    if entry.session_id:
        where += f"?session={entry.session_id}"
    return back(request, seen, where, None if entry.status == "done" else entry.reply)


def routes() -> list[Route]:
    return [
        Route("/u/{user}/chat", page(chat_page), methods=["GET"]),
        Route("/u/{user}/chat/new", page(new_session), methods=["POST"]),
        Route("/u/{user}/chat/send", send, methods=["POST"]),
    ]
