"""The owner's Platforms page over plain HTTP reads Telegram's getWebhookInfo and warns when the
registered ``allowed_updates`` leave out an update type Iris handles (Telegram never sends it)."""

from __future__ import annotations

import pytest

from core.dashboard.signin import issue_link
from core.platforms.telegram_inbound import UPDATE_TYPES
from iris_testing.server import serve
from iris_testing.telegram_api import FakeTelegram

TOKEN = "123456:" + "A" * 35


@pytest.fixture
def telegram(monkeypatch, request):
    fake = FakeTelegram(token=TOKEN)
    with serve(fake.app) as api:
        monkeypatch.setenv("IRIS_TELEGRAM_TOKEN", TOKEN)
        monkeypatch.setenv("IRIS_TELEGRAM_SECRET", "s3cret-webhook")
        monkeypatch.setenv("IRIS_TELEGRAM_API_BASE", api.url)
        yield fake, api.url, request.getfixturevalue("dash"), request.getfixturevalue("web")


def platforms_page(dash, web) -> str:
    owner = dash.runtime.store.users.for_account("http:carol")
    link = issue_link(dash.runtime.store, owner, is_owner=True, issued_by="test",
                      base_url=dash.url)
    assert web.post("/ui/signin", data={"t": link.token},
                    headers={"origin": dash.url}).status_code == 303
    page = web.get("/ui/owner/platforms")
    assert page.status_code == 200, page.text
    return page.text


def register(api_url: str, allowed: list[str]) -> None:
    import httpx

    httpx.post(f"{api_url}/bot{TOKEN}/setWebhook", json={
        "url": "https://iris.example/telegram/webhook", "allowed_updates": allowed})


def test_a_webhook_registered_without_button_presses_is_flagged(telegram):
    _, api_url, dash, web = telegram
    register(api_url, ["message"])  # what `iris telegram set-webhook` used to register
    text = platforms_page(dash, web)
    assert "data-missing-updates" in text
    assert "registered without callback_query" in text
    assert "iris telegram set-webhook URL" in text


def test_a_webhook_with_every_handled_type_is_not_flagged(telegram):
    _, api_url, dash, web = telegram
    register(api_url, list(UPDATE_TYPES))
    text = platforms_page(dash, web)
    assert "data-missing-updates" not in text
    assert "message, callback_query" in text
