"""Hybrid (words + meaning) search through the admin HTTP API and the session_search tool."""

import asyncio
import json

import httpx

from core.contracts.toolkit import ToolContext
from core.sessions.transfer import import_sessions, read_lines
from core.tools.session_search import SessionSearch, SessionSearchArgs
from functions.app import create_app
from iris_testing.server import serve

KEY = {"Authorization": "Bearer admin-key"}
LINES = [
    {"user": "alice", "session_id": "pets", "started_at": "2024-05-01T10:00:00Z",
     "title": "Puppy", "messages": [
         {"role": "user", "content": "We finally adopted a beagle last weekend, he chews "
          "everything.", "id": "p1"},
         {"role": "assistant", "content": "Congratulations! Give him chew toys.", "id": "p2"}]},
    {"user": "alice", "session_id": "work", "started_at": "2024-06-01T10:00:00Z",
     "messages": [{"role": "user", "content": "deploy failed: ERR_CONN_RESET", "id": "w1"},
                  {"role": "assistant", "content": "The connection was reset by the peer.",
                   "id": "w2"}]},
    {"user": "bob", "session_id": "b1", "started_at": "2024-06-01T10:00:00Z",
     "messages": [{"role": "user", "content": "Our family got a new dog.", "id": "b1"}]},
]


def test_paraphrase_found_over_http_with_matched_signals(runtime):
    import_sessions(runtime.store, read_lines([json.dumps(x) for x in LINES]))
    with serve(create_app(runtime)) as server, \
            httpx.Client(base_url=server.url, timeout=60) as client:
        hits = client.get("/api/users/alice/sessions/search",
                          params={"q": "Which animal did we get as a pet?"}, headers=KEY).json()
        assert hits[0]["external_id"] == "p1" and hits[0]["matched"] == ["semantic"]
        assert all(h["external_id"] != "b1" for h in hits)
        exact = client.get("/api/users/alice/sessions/search",
                           params={"q": "ERR_CONN_RESET"}, headers=KEY).json()
        assert exact[0]["external_id"] == "w1" and "lexical" in exact[0]["matched"]
        blank = client.get("/api/users/alice/sessions/search", params={"q": ""}, headers=KEY)
        assert blank.status_code in (400, 422)


def test_the_tool_finds_a_paraphrase(runtime):
    import_sessions(runtime.store, read_lines([json.dumps(x) for x in LINES]))
    user = runtime.store.users.resolve("alice")
    ctx = ToolContext(store=runtime.store, settings=runtime.settings, user_id=user,
                      session_id="ses_x", chat_key="http:alice", platform="http",
                      account="http:alice", services=runtime.services)
    out = asyncio.run(SessionSearch().run(ctx, SessionSearchArgs(
        query="what kind of dog do we have?")))
    assert 'Session pets "Puppy"' in out and "» #" in out and "beagle" in out
    assert "new dog" not in out
