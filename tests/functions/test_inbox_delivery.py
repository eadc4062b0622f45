"""Scheduled results reach HTTP and terminal users: a job made over the HTTP API delivers into
the user's Iris inbox, which the API returns and a registered webhook receives, signed."""

import asyncio
import hashlib
import hmac
import json

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from core.clock import ManualClock
from core.messages import InboundMessage, ToolCall
from core.platforms import inbox
from core.scheduler.jobs import CronJobs
from functions.app import create_app
from functions.cron import run_now
from functions.ingress import receive
from iris_testing.scripted_model import tool_calls
from iris_testing.server import serve
from tests.clocks import NOW

KEY = {"Authorization": "Bearer test-key"}


@pytest.fixture
def clock():
    return ManualClock(NOW)


@pytest.fixture
def api(runtime):
    with serve(create_app(runtime)) as server, httpx.Client(base_url=server.url, timeout=60,
                                                            headers=KEY) as client:
        yield client


def ask(runtime, text, user="alice"):
    """A chat message as the HTTP API records it (in this thread's event loop, so the test
    can wait for the chat's worker)."""
    message = InboundMessage(platform="http", chat_id=user, account=f"http:{user}",
                             platform_message_id=f"http:{user}:{text}", text=text)

    async def go():
        received = await receive(runtime, message)
        await runtime.dispatcher.idle()
        return runtime.store.inbox.get(received.user_id, received.entry_id).reply

    return asyncio.run(go())


def make_job_over_http(runtime, scripted, user="alice"):
    """The user asks for a job in the chat; the model creates it with the cronjob tool."""
    create = ToolCall(id="call_cron", name="cronjob", arguments=json.dumps({
        "action": "create", "schedule": "every 1h", "prompt": "Report the weather",
        "name": "weather"}))
    scripted.then(tool_calls(create), "Scheduled.")
    assert ask(runtime, "every hour, report the weather", user) == "Scheduled."
    user_id = runtime.store.users.resolve(f"http:{user}")
    [job] = CronJobs(runtime.store).list(user_id)
    return user_id, job


def run_job(runtime, user_id, job):
    asyncio.run(_run(runtime, user_id, job))


async def _run(runtime, user_id, job):
    await run_now(runtime, user_id, job.id)
    await runtime.dispatcher.idle()


def test_a_job_made_over_http_delivers_into_the_users_inbox(api, runtime, scripted):
    user_id, job = make_job_over_http(runtime, scripted)
    assert job.target.platform == "inbox"
    scripted.then("Sunny, 21°C.")
    run_job(runtime, user_id, job)
    unread = api.get("/v1/notifications", params={"user": "alice"}).json()["data"]
    assert [n["text"] for n in unread] == ["⏰ weather\n\nSunny, 21°C."]
    assert api.get("/v1/notifications", params={"user": "bob"}).json()["data"] == []
    assert api.post("/v1/notifications/read", json={"user": "bob", "up_to": unread[0]["id"]}
                    ).json() == {"marked": 0}
    assert len(api.get("/v1/notifications", params={"user": "alice"}).json()["data"]) == 1
    assert api.post("/v1/notifications/read", json={"user": "alice", "up_to": unread[0]["id"]}
                    ).json() == {"marked": 1}
    assert api.get("/v1/notifications", params={"user": "alice"}).json()["data"] == []


def test_bad_webhook_urls_are_refused_and_change_nothing(api, runtime):
    for url in ("ftp://example.com/x", "not a url", "http://"):
        response = api.put("/v1/notifications/webhook", json={"user": "alice", "url": url})
        assert response.status_code == 400, url
    assert api.get("/v1/notifications/webhook", params={"user": "alice"}).status_code == 404


class Receiver:
    """A webhook endpoint: answers with the queued statuses, then 200; keeps what it got."""

    def __init__(self, statuses=()):
        self.statuses = list(statuses)
        self.received: list[tuple[bytes, str]] = []
        self.url = ""

    async def endpoint(self, request: Request) -> JSONResponse:
        self.received.append((await request.body(), request.headers["x-iris-signature"]))
        return JSONResponse({}, status_code=self.statuses.pop(0) if self.statuses else 200)

    @property
    def app(self):
        return Starlette(routes=[Route("/hook", self.endpoint, methods=["POST"])])


@pytest.fixture
def receiver(iris_home, monkeypatch):
    """A webhook on loopback that fails once with 503, allowed by the operator's setting
    (a loopback webhook is refused otherwise); start it before the runtime reads settings."""
    receiver = Receiver(statuses=[503])
    with serve(receiver.app) as hook_server:
        monkeypatch.setenv("IRIS_WEB_ALLOW_HOSTS", f"127.0.0.1:{hook_server.port}")
        receiver.url = f"{hook_server.url}/hook"
        yield receiver


def test_a_registered_webhook_gets_the_result_signed_and_retried(receiver, api, runtime,
                                                                   scripted, clock):
    registered = api.put("/v1/notifications/webhook",
                         json={"user": "alice", "url": receiver.url}).json()
    secret = registered["secret"]
    assert secret.startswith("whsec_")
    user_id, job = make_job_over_http(runtime, scripted)
    scripted.then("Rain later.")
    run_job(runtime, user_id, job)
    [delivery] = runtime.store.deliveries.for_chat(user_id, job.chat_key)
    assert delivery.status == "pending" and delivery.last_error == inbox.NOT_TAKEN
    clock.advance(60)
    assert asyncio.run(runtime.delivery.sweep()) == 1
    assert runtime.store.deliveries.get(user_id, delivery.id).status == "sent"
    assert len(receiver.received) == 2
    body, signature = receiver.received[-1]
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(signature, expected)
    note = json.loads(body)
    assert note["text"] == "⏰ weather\n\nRain later." and note["id"] == delivery.id
    # pushed to the webhook: read, so the API does not return it a second time
    assert api.get("/v1/notifications", params={"user": "alice"}).json()["data"] == []
