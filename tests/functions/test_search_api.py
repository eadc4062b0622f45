"""The admin search API over real HTTP (uvicorn on loopback)."""

import json

import httpx
import pytest

from core.sessions.transfer import import_sessions, read_lines
from functions.app import create_app
from iris_testing.server import serve

KEY = {"Authorization": "Bearer admin-key"}


@pytest.fixture
def api(runtime):
    lines = [
        {"user": "alice", "session_id": "trip", "started_at": "2024-05-01T10:00:00Z",
         "title": "Lisbon", "messages": [
             {"role": "user", "content": "I'm flying to Lisbon on June 3rd with TAP.", "id": "t1"},
             {"role": "assistant", "content": "Enjoy the pastéis de nata!", "id": "t2"}]},
        {"user": "alice", "session_id": "work", "started_at": "2024-06-01T10:00:00Z",
         "messages": [{"role": "user", "content": "deploy failed: ERR_CONN_RESET", "id": "w1"}]},
        {"user": "bob", "session_id": "bob1", "started_at": "2024-06-01T10:00:00Z",
         "messages": [{"role": "user", "content": "I am flying to Lisbon too", "id": "b1"}]},
    ]
    import_sessions(runtime.store, read_lines([json.dumps(x) for x in lines]))
    with serve(create_app(runtime)) as server, \
            httpx.Client(base_url=server.url, timeout=60) as client:
        yield client


def test_ranked_flat_hits_with_ids_and_snippets(api):
    response = api.get("/api/users/alice/sessions/search", params={"q": "when do I fly to Lisbon?"},
                       headers=KEY)
    assert response.status_code == 200
    hits = response.json()
    assert isinstance(hits, list) and hits
    top = hits[0]
    assert top["session_id"] == "trip" and top["external_id"] == "t1" and top["rank"] == 1
    assert top["role"] == "user" and top["timestamp"] == "2024-05-01T10:00:00Z"
    assert "Lisbon" in top["snippet"] and top["score"] > 0
    assert isinstance(top["message_id"], int) and top["session_title"] == "Lisbon"
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    assert all(h["external_id"] != "b1" for h in hits)


def test_limit_account_refs_and_filters(api, runtime):
    user_id = runtime.store.users.resolve("http:alice")
    for ref in ("alice", "http:alice", user_id):
        hits = api.get(f"/api/users/{ref}/sessions/search", params={"q": "conn_reset"},
                       headers=KEY).json()
        assert [h["external_id"] for h in hits] == ["w1"]
    many = api.get("/api/users/alice/sessions/search", params={"q": "lisbon nata deploy",
                                                                "limit": 1}, headers=KEY).json()
    assert len(many) == 1
    scoped = api.get("/api/users/alice/sessions/search",
                     params={"q": "lisbon deploy", "session_id": "work"}, headers=KEY).json()
    assert {h["session_id"] for h in scoped} == {"work"}


def test_auth_and_bad_requests(api):
    url = "/api/users/alice/sessions/search"
    assert api.get(url, params={"q": "x"}).status_code == 401
    assert api.get(url, params={"q": "x"}, headers={"Authorization": "Bearer no"}
                   ).status_code == 401
    missing = api.get(url, headers=KEY)
    assert missing.status_code == 400 and "q" in missing.json()["error"]["message"]
    assert api.get(url, params={"q": "x", "limit": 0}, headers=KEY).status_code == 400
    assert api.get(url, params={"q": "x", "since": "soon"}, headers=KEY).status_code == 400
    unknown = api.get("/api/users/nobody/sessions/search", params={"q": "x"}, headers=KEY)
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "user_not_found"
    assert api.get(url, params={"q": "x", "session_id": "bob1"}, headers=KEY).status_code == 404
    assert api.get(url, params={"q": '"AND (NEAR'}, headers=KEY).status_code == 200
