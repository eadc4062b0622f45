"""The HTTP API over real HTTP (uvicorn on loopback), with the scripted in-process model."""

import json

import httpx
import pytest

from functions.app import create_app
from iris_testing.server import serve

KEY = {"Authorization": "Bearer test-key"}


@pytest.fixture
def api(runtime):
    # A first turn may load the embedding model (seconds on a busy machine): not what is tested.
    with serve(create_app(runtime)) as server, \
            httpx.Client(base_url=server.url, timeout=60) as client:
        yield client


def chat(text="hi", **extra):
    return {"messages": [{"role": "user", "content": text}], **extra}


def inbox_count(runtime):
    return runtime.store.db.scalar("SELECT count(*) FROM inbox")


def test_healthz_needs_no_key(api):
    assert api.get("/healthz").json() == {"ok": True}


def test_completion_round_trip_with_session_header(api, runtime, scripted):
    scripted.then("Hello!")
    response = api.post("/v1/chat/completions", json=chat(user="alice"), headers=KEY)
    assert response.status_code == 200
    body = response.json()
    assert body["object"] == "chat.completion"
    assert body["choices"][0]["message"] == {"role": "assistant", "content": "Hello!"}
    assert body["usage"]["total_tokens"] > 0
    session = response.headers["x-iris-session"]
    user = runtime.store.users.resolve("http:alice")
    assert runtime.store.sessions.get(user, session).chat_key == "http:alice"


def test_history_is_kept_by_the_server(api, scripted):
    scripted.then("one", "two")
    api.post("/v1/chat/completions", json=chat("first", user="alice"), headers=KEY)
    client_history = [
        {"role": "user", "content": "IGNORED old turn"},
        {"role": "assistant", "content": "IGNORED"},
        {"role": "user", "content": "second"},
    ]
    api.post("/v1/chat/completions", json={"messages": client_history, "user": "alice"},
             headers=KEY)
    assert [m.content for m in scripted.requests[1][1:]] == ["first", "one", "second"]


def test_session_pin(api, scripted):
    scripted.then("a", "b", "c")
    first = api.post("/v1/chat/completions", json=chat("in s1", user="al"), headers=KEY)
    pinned = first.headers["x-iris-session"]
    api.post("/v1/chat/completions", json=chat("/new", user="al"), headers=KEY)
    again = api.post("/v1/chat/completions", json=chat("back in s1", user="al"),
                     headers={**KEY, "X-Iris-Session": pinned})
    assert again.headers["x-iris-session"] == pinned
    assert [m.content for m in scripted.requests[-1][1:]] == ["in s1", "a", "back in s1"]


def test_idempotency_key_returns_the_first_result(api, runtime, scripted):
    scripted.then("only answer")
    headers = {**KEY, "Idempotency-Key": "req-1"}
    first = api.post("/v1/chat/completions", json=chat(user="alice"), headers=headers)
    second = api.post("/v1/chat/completions", json=chat(user="alice"), headers=headers)
    assert first.json() == second.json()
    assert len(scripted.requests) == 1 and inbox_count(runtime) == 1
    conflict = api.post("/v1/chat/completions", json=chat("other", user="alice"), headers=headers)
    assert conflict.status_code == 409
    assert conflict.json()["error"]["code"] == "idempotency_conflict"


def test_same_idempotency_key_for_two_users_is_two_requests(api, scripted):
    scripted.then("for a", "for b")
    headers = {**KEY, "Idempotency-Key": "shared"}
    a = api.post("/v1/chat/completions", json=chat(user="a"), headers=headers).json()
    b = api.post("/v1/chat/completions", json=chat(user="b"), headers=headers).json()
    assert a["choices"][0]["message"]["content"] == "for a"
    assert b["choices"][0]["message"]["content"] == "for b"


def test_streaming_sends_role_then_content_then_done(api, scripted):
    scripted.then("streamed answer")
    with api.stream("POST", "/v1/chat/completions", json=chat(stream=True), headers=KEY) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        events = [line[6:] for line in r.iter_lines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
    assert text == "streamed answer"
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_streaming_carries_the_session_header(api, runtime, scripted):
    scripted.then("first", "second")
    with api.stream("POST", "/v1/chat/completions", json=chat(stream=True, user="sam"),
                    headers=KEY) as r:
        session = r.headers["x-iris-session"]
        list(r.iter_lines())
    user = runtime.store.users.resolve("http:sam")
    assert runtime.store.sessions.get(user, session).chat_key == "http:sam"
    plain = api.post("/v1/chat/completions", json=chat("again", user="sam"), headers=KEY)
    assert plain.headers["x-iris-session"] == session


@pytest.mark.parametrize(
    ("headers", "code"),
    [({}, "missing_api_key"), ({"Authorization": "Bearer wrong"}, "invalid_api_key"),
     ({"Authorization": "Basic dGVzdC1rZXk="}, "missing_api_key")],
)
def test_bad_auth_is_401_and_stores_nothing(api, runtime, headers, code):
    response = api.post("/v1/chat/completions", json=chat(), headers=headers)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == code
    assert inbox_count(runtime) == 0


@pytest.mark.parametrize(
    ("body", "status", "fragment"),
    [
        (b"{not json", 400, "not valid JSON"),
        (json.dumps({"messages": []}).encode(), 400, "messages"),
        (json.dumps({"nomessages": 1}).encode(), 400, "messages"),
        (json.dumps(chat(user="bad user!")).encode(), 400, "user"),
        (json.dumps({"messages": [{"role": "assistant", "content": "x"}]}).encode(), 400,
         "last message must have role 'user'"),
        (json.dumps(chat("   ")).encode(), 400, "empty"),
        (json.dumps({"messages": [{"role": "user", "content": [
            {"type": "input_audio", "input_audio": {"data": "x"}}]}]}).encode(), 400,
         "only text, image_url and file parts"),
        (json.dumps({"messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "ftp://x/a.png"}}]}]}).encode(), 400,
         "must be an http(s) or data: URL"),
        (json.dumps({"messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,aGVsbG8="}}]}]}
                    ).encode(), 400, "not a PNG, JPEG, GIF or WebP image"),
        (json.dumps(chat("x" * 40_000)).encode(), 413, "limit is 32000"),
    ],
)
def test_malformed_requests_are_openai_shaped_errors(api, runtime, body, status, fragment):
    response = api.post("/v1/chat/completions", content=body,
                        headers={**KEY, "Content-Type": "application/json"})
    assert response.status_code == status
    error = response.json()["error"]
    assert fragment in error["message"] and error["type"] == "invalid_request_error"
    assert inbox_count(runtime) == 0


def test_text_content_parts_are_joined(api, scripted):
    scripted.then("ok")
    parts = [{"type": "text", "text": "part one"}, {"type": "text", "text": "part two"}]
    api.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": parts}]},
             headers=KEY)
    assert scripted.requests[0][-1].content == "part one\npart two"


def test_unknown_pinned_session_is_404(api, runtime):
    response = api.post("/v1/chat/completions", json=chat(user="alice"),
                        headers={**KEY, "X-Iris-Session": "ses_nope"})
    assert response.status_code == 404
    assert inbox_count(runtime) == 0


def test_oversized_body_is_refused_before_reading(api):
    response = api.post("/v1/chat/completions", content=b"x" * (11 * 1024 * 1024),
                        headers={**KEY, "Content-Type": "application/json"})
    assert response.status_code == 413


def test_unknown_route_is_openai_shaped_404(api):
    response = api.get("/v1/nothing", headers=KEY)
    assert response.status_code == 404 and "error" in response.json()


def test_api_is_disabled_without_a_key(runtime):
    runtime.settings = runtime.settings.model_copy(update={"api_key": None})
    with serve(create_app(runtime)) as server:
        response = httpx.post(f"{server.url}/v1/chat/completions", json=chat(), headers=KEY)
    assert response.status_code == 503
    assert "IRIS_API_KEY is not set" in response.json()["error"]["message"]


def test_provider_failure_maps_to_an_http_status(api, scripted):
    from core.errors import ProviderError

    scripted.then(ProviderError("rate_limit", "slow down", retryable=True))
    response = api.post("/v1/chat/completions", json=chat(), headers=KEY)
    assert response.status_code == 503
    error = response.json()["error"]
    assert error["code"] == "provider_rate_limited" and "rate-limiting" in error["message"]
