"""Fuzzing both webhooks with hypothesis: malformed, oversized and wrongly signed requests get a
4xx (never a 5xx) and leave every table as it was."""

import json
import re
import time

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from core.config import load_settings
from functions.app import create_app
from functions.runtime import compose
from iris_testing.platform_stack import SLACK_SECRET, TELEGRAM_SECRET, stack_env
from iris_testing.slack_api import FakeSlack
from iris_testing.telegram_api import FakeTelegram

FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])
TG = "/telegram/webhook"
SLACK = "/slack/events"

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


class HandOff:
    async def drain(self, chat):
        return None


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    home = tmp_path_factory.mktemp("fuzz-home")
    settings_ = load_settings(stack_env(home, "http://127.0.0.1:9", "http://127.0.0.1:9"))
    rt = compose(settings_, dispatcher=HandOff())
    with TestClient(create_app(rt), raise_server_exceptions=False) as test_client:
        test_client.rt = rt
        yield test_client
    rt.store.close()


def snapshot(rt):
    db = rt.store.db
    tables = [r["name"] for r in db.query(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        " AND name NOT LIKE '%fts%' AND name != '_migrations'")]
    return {name: db.scalar(f"SELECT count(*) FROM {name}") for name in tables}


def refused(client, path, body, headers, allowed):
    before = snapshot(client.rt)
    response = client.post(path, content=body, headers=headers)
    assert response.status_code in allowed, (response.status_code, response.text[:200])
    assert snapshot(client.rt) == before
    return response


def tg_headers(secret=TELEGRAM_SECRET):
    return {"Content-Type": "application/json",
            "X-Telegram-Bot-Api-Secret-Token": secret.encode("latin-1")}


def slack_headers(body, secret=SLACK_SECRET, timestamp=None, content_type="application/json"):
    return {"Content-Type": content_type, **FakeSlack.sign(body, secret, timestamp)}


# Telegram

@FUZZ
@given(body=st.binary(max_size=2000))
def test_telegram_random_bytes(client, body):
    refused(client, TG, body, tg_headers(), {400})


@FUZZ
@given(value=json_values)
def test_telegram_json_that_is_not_an_update(client, value):
    if isinstance(value, dict):
        value.pop("update_id", None)
    refused(client, TG, json.dumps(value).encode(), tg_headers(), {400})


def _corruptions():
    paths = [("update_id",), ("message",), ("message", "message_id"), ("message", "chat"),
             ("message", "chat", "id"), ("message", "from", "id"),
             ("message", "entities"), ("message", "voice"), ("message", "reply_to_message")]
    bad = st.one_of(st.text(min_size=1).filter(lambda s: not s.strip().lstrip("-").isdigit()),
                    st.lists(st.integers(), min_size=1), st.dictionaries(st.text(), st.text(),
                                                                         min_size=1),
                    st.floats(allow_nan=False).filter(lambda f: not f.is_integer()))
    return st.tuples(st.sampled_from(paths), bad)


@FUZZ
@given(corruption=_corruptions(), text=st.text(max_size=200))
@example(corruption=(("update_id",), "+0"), text="")  # once parsed leniently as update 0
def test_telegram_updates_with_a_broken_field(client, corruption, text):
    path, value = corruption
    update = FakeTelegram().make_update(text or "x", reply_to={"message_id": 1, "chat": {
        "id": 1, "type": "private"}, "date": 1})
    target = update
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    refused(client, TG, json.dumps(update).encode(), tg_headers(), {400})


@FUZZ
@given(secret=st.text(alphabet=st.characters(codec="latin-1"), max_size=80),
       text=st.text(max_size=100))
def test_telegram_wrong_secrets(client, secret, text):
    update = FakeTelegram().make_update(text or "hi")
    headers = tg_headers(secret) if secret != TELEGRAM_SECRET else tg_headers(secret + "!")
    refused(client, TG, json.dumps(update).encode(), headers, {403})


def test_telegram_oversized_bodies(client):
    update = FakeTelegram().make_update("x" * (1024 * 1024 + 10))
    refused(client, TG, json.dumps(update).encode(), tg_headers(), {413})
    refused(client, TG, b"{" * (11 * 1024 * 1024), tg_headers(), {413})

    def chunks():
        for _ in range(40):
            yield b" " * 32 * 1024

    refused(client, TG, chunks(), tg_headers(), {413})


# Slack

@FUZZ
@given(body=st.binary(max_size=2000), secret=st.text(max_size=40))
def test_slack_wrongly_signed(client, body, secret):
    if secret == SLACK_SECRET:
        secret += "!"
    refused(client, SLACK, body, slack_headers(body, secret), {401})


@FUZZ
@given(body=st.binary(max_size=500), age=st.integers(min_value=301, max_value=10**6))
def test_slack_stale_or_unsigned(client, body, age):
    refused(client, SLACK, body, slack_headers(body, timestamp=int(time.time()) - age), {401})
    refused(client, SLACK, body, {"Content-Type": "application/json"}, {401})


@FUZZ
@given(body=st.binary(max_size=2000))
def test_slack_signed_random_bytes(client, body):
    try:
        value = json.loads(body)
    except ValueError:
        value = None
    if isinstance(value, dict):
        return
    refused(client, SLACK, body, slack_headers(body), {400})


@FUZZ
@given(value=json_values)
def test_slack_signed_json_that_is_not_an_event(client, value):
    body = json.dumps(value).encode()
    allowed = {200, 400} if isinstance(value, dict) and isinstance(value.get("type"), str) else {
        400}
    refused(client, SLACK, body, slack_headers(body), allowed)


@FUZZ
@given(fields=st.dictionaries(
    st.sampled_from(["command", "text", "user_id", "channel_id", "team_id", "response_url",
                     "trigger_id", "junk"]),
    st.text(max_size=30), max_size=6))
def test_slack_signed_forms_that_are_not_commands(client, fields):
    fields.pop("response_url", None)
    from urllib.parse import urlencode

    body = urlencode(fields).encode()
    refused(client, SLACK, body,
            slack_headers(body, content_type="application/x-www-form-urlencoded"), {400})


NOT_AN_ID = st.one_of(
    st.just(""), st.integers(), st.lists(st.text(), max_size=2),
    st.text(min_size=1, max_size=80).filter(
        lambda s: not re.fullmatch(r"[A-Za-z0-9_-]{1,64}|\d{1,12}\.\d{1,9}", s)),
)


@FUZZ
@given(kind=st.sampled_from(["message", "app_mention"]),
       field=st.sampled_from(["user", "channel", "ts", "thread_ts"]), bad=NOT_AN_ID,
       text=st.text(max_size=50))
def test_slack_events_with_broken_fields(client, kind, field, bad, text):
    fake = FakeSlack()
    event = fake.message_event(text or "x", channel="D1", channel_type="im")
    event.update({"type": kind, field: bad})
    body = json.dumps(fake.event_payload(event)).encode()
    refused(client, SLACK, body, slack_headers(body), {400})


def test_slack_oversized_body(client):
    body = json.dumps({"type": "event_callback", "pad": "x" * (1024 * 1024)}).encode()
    refused(client, SLACK, body, slack_headers(body), {413})
