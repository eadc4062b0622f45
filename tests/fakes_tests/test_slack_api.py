import asyncio
import json
import time

import httpx
import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient

from iris_testing.server import serve
from iris_testing.slack_api import FakeSlack

SECRET = "signing-secret"


@pytest.fixture
def slack():
    return FakeSlack()


@pytest.fixture
def url(slack):
    with serve(slack.app) as server:
        yield server.url


@pytest.fixture
def client(url):
    return WebClient(token="xoxb-test", base_url=f"{url}/api/")


def test_post_message_round_trip(slack, client):
    first = client.chat_postMessage(channel="C1", text="hello")
    second = client.chat_postMessage(channel="C1", text="in thread", thread_ts=first["ts"])
    client.chat_postMessage(channel="D9", text="dm")

    assert first["ok"] is True
    assert first["channel"] == "C1"
    assert first["message"]["text"] == "hello"
    assert first["message"]["user"] == "UBOT"
    assert float(second["ts"]) > float(first["ts"])
    assert first["ts"] == "1700000000.000100"
    assert [p["text"] for p in slack.posted("C1")] == ["hello", "in thread"]
    assert slack.posted("C1")[1]["thread_ts"] == first["ts"]
    assert len(slack.posted()) == 3


def test_auth_test(client):
    response = client.auth_test()

    assert response["user_id"] == "UBOT"
    assert response["team_id"] == "T1"
    assert response["bot_id"] == "BBOT"


def test_update_reaction_and_lookups(slack, client):
    posted = client.chat_postMessage(channel="C1", text="thinking…")
    client.chat_update(channel="C1", ts=posted["ts"], text="done")
    client.reactions_add(channel="C1", timestamp=posted["ts"], name="eyes")
    slack.users["U7"] = {"real_name": "Grace Hopper", "tz": "America/New_York"}
    user = client.users_info(user="U7")["user"]
    channel = client.conversations_info(channel="D42")["channel"]

    assert slack.message("C1", posted["ts"])["text"] == "done"
    assert user["real_name"] == "Grace Hopper"
    assert user["tz"] == "America/New_York"
    assert channel["is_im"] is True
    reaction = dict(slack.calls)["reactions.add"]
    assert reaction == {"channel": "C1", "timestamp": posted["ts"], "name": "eyes"}
    with pytest.raises(SlackApiError) as error:
        client.chat_update(channel="C1", ts="1.000000", text="x")
    assert error.value.response["error"] == "message_not_found"


def test_failure_injection(slack, client):
    slack.fail_next("chat.postMessage", retry_after=2)
    slack.fail_next("chat.postMessage", status=500, error="internal_error")
    slack.fail_next("chat.postMessage", status=200, error="channel_not_found")

    errors = []
    for _ in range(3):
        with pytest.raises(SlackApiError) as caught:
            client.chat_postMessage(channel="C1", text="x")
        errors.append(caught.value.response)
    client.chat_postMessage(channel="C1", text="finally")

    assert [e.status_code for e in errors] == [429, 500, 200]
    assert [e["error"] for e in errors] == ["ratelimited", "internal_error", "channel_not_found"]
    assert errors[0].headers["Retry-After"] in ("2", ["2"])
    assert [p["text"] for p in slack.posted()] == ["finally"]
    assert slack.methods_called() == ["chat.postMessage"] * 4


def test_unknown_method_and_token_check(url):
    response = httpx.post(f"{url}/api/chat.teleport")
    assert response.json() == {"ok": False, "error": "unknown_method"}

    strict = FakeSlack(token="xoxb-right")
    with serve(strict.app) as server:
        wrong = WebClient(token="xoxb-wrong", base_url=f"{server.url}/api/")
        with pytest.raises(SlackApiError) as error:
            wrong.auth_test()
        right = WebClient(token="xoxb-right", base_url=f"{server.url}/api/")
        assert right.auth_test()["ok"] is True
    assert error.value.response["error"] == "invalid_auth"


def test_async_client(slack, url):
    async def run():
        client = AsyncWebClient(token="xoxb-test", base_url=f"{url}/api/")
        return await client.chat_postMessage(channel="C2", text="async hello")

    response = asyncio.run(run())

    assert response["ok"] is True
    assert slack.posted("C2")[0]["text"] == "async hello"


def test_signature_helper_is_accepted_by_the_sdk(slack):
    body = json.dumps(slack.event_payload(slack.message_event("hi"))).encode()
    verifier = SignatureVerifier(SECRET)

    assert verifier.is_valid_request(body, FakeSlack.sign(body, SECRET))
    assert not verifier.is_valid_request(body, FakeSlack.sign(body, "other-secret"))
    stale = FakeSlack.sign(body, SECRET, timestamp=int(time.time()) - 600)
    assert not verifier.is_valid_request(body, stale)


def test_event_builders(slack):
    dm = slack.message_event("hello", user="U5", channel="D5", channel_type="im")
    mention = slack.app_mention_event("what's up", thread_ts="1700000000.000100")
    payload = slack.event_payload(mention)
    other = slack.event_payload(dm, event_id="Ev-fixed", team_id="T9")

    assert dm["type"] == "message"
    assert dm["channel_type"] == "im"
    assert "thread_ts" not in dm
    assert mention["text"] == "<@UBOT> what's up"
    assert mention["thread_ts"] == "1700000000.000100"
    assert float(mention["ts"]) > float(dm["ts"])
    assert payload["type"] == "event_callback"
    assert payload["event"] is mention
    assert payload["authorizations"][0]["user_id"] == "UBOT"
    assert payload["event_id"] != slack.event_payload(mention)["event_id"]
    assert (other["event_id"], other["team_id"]) == ("Ev-fixed", "T9")


def test_the_fakes_signatures_pass_slack_sdks_own_verifier(slack):
    from slack_sdk.signature import SignatureVerifier

    event = slack.app_mention_event("ping", channel="C7")
    body = json.dumps(slack.event_payload(event))
    headers = {"content-type": "application/json", **FakeSlack.sign(body, SECRET)}
    verifier = SignatureVerifier(SECRET)
    assert verifier.is_valid_request(body, headers)
    assert not verifier.is_valid_request(body, {**headers, **FakeSlack.sign(body, "x")})
    assert not SignatureVerifier("another-secret").is_valid_request(body, headers)
