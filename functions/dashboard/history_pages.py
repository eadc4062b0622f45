"""Sessions: search with the matched words highlighted, a transcript with tool calls folded,
and export (JSON, as ``iris sessions export``)."""

from __future__ import annotations

import json

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from core.dashboard.highlight import pieces
from core.sessions.transfer import export_record
from functions.dashboard.guard import own, runtime
from functions.dashboard.web import page, render


def sessions_page(request: Request, form: FormData | None) -> Response:
    seen = own(request)
    rt = runtime(request)
    store = rt.store
    query = request.query_params.get("q", "").strip()[:500]
    hits = []
    if query:
        from core.search.engine import search_messages

        hits = [(hit, pieces(hit.snippet, query))
                for hit in search_messages(store, seen.user_id, query, limit=20,
                                           timezone=rt.settings.timezone)]
    return render(request, "sessions.html", viewer=seen, query=query, hits=hits,
                  sessions=store.sessions.list(seen.user_id, limit=100))


def transcript_page(request: Request, form: FormData | None) -> Response:
    seen = own(request)
    store = runtime(request).store
    session = store.sessions.get(seen.user_id, request.path_params["session"])
    messages = store.messages.for_session(seen.user_id, session.id)
    results = {m.message.tool_call_id: m.message for m in messages if m.message.role == "tool"}
    return render(request, "transcript.html", viewer=seen, session=session,
                  messages=[m for m in messages if m.message.role != "tool"], results=results)


def export(request: Request, form: FormData | None) -> Response:
    seen = own(request)
    store = runtime(request).store
    session = store.sessions.get(seen.user_id, request.path_params["session"])
    messages = store.messages.for_session(seen.user_id, session.id)
    accounts = store.users.accounts(seen.user_id)
    record = export_record(session, None, messages, "iris", accounts[0] if accounts
                           else seen.user_id)
    return Response(json.dumps(record, indent=2, ensure_ascii=False),
                    media_type="application/json", headers={
                        "content-disposition": f'attachment; filename="{session.id}.json"'})


def routes() -> list[Route]:
    return [
        Route("/u/{user}/sessions", page(sessions_page), methods=["GET"]),
        Route("/u/{user}/sessions/{session}", page(transcript_page), methods=["GET"]),
        Route("/u/{user}/sessions/{session}/export", page(export), methods=["GET"]),
    ]
