"""The platform senders through the real client libraries against the fake APIs, and the
delivery service's part-by-part progress."""

import asyncio

import pytest

from core.clock import ManualClock
from core.contracts.senders import DeliveryFailed
from core.platforms.delivery import DeliveryService, backoff
from core.platforms.registry import PLATFORMS
from core.platforms.slack import SlackSender
from core.platforms.telegram import TelegramSender
from iris_testing.server import serve
from iris_testing.slack_api import FakeSlack
from iris_testing.telegram_api import FakeTelegram
from tests.clocks import NOW

TOKEN = "7000001:abc"


@pytest.fixture
def clock():
    """Backoff here elapses by moving the store's clock."""
    return ManualClock(NOW)


@pytest.fixture
def telegram():
    fake = FakeTelegram(token=TOKEN)
    with serve(fake.app) as server:
        yield fake, TelegramSender(TOKEN, server.url)


@pytest.fixture
def slack():
    fake = FakeSlack(token="xoxb-1")
    with serve(fake.app) as server:
        yield fake, SlackSender("xoxb-1", f"{server.url}/api/")


def test_senders_come_from_settings(settings):
    from pydantic import SecretStr

    assert PLATFORMS.senders(settings) == {}
    configured = settings.model_copy(update={
        "telegram_token": SecretStr("1:x"), "slack_bot_token": SecretStr("xoxb-1")})
    senders = PLATFORMS.senders(configured)
    assert isinstance(senders["telegram"], TelegramSender)
    assert isinstance(senders["slack"], SlackSender)
    assert senders["slack"].api_base == "https://slack.com/api/"


def test_telegram_quotes_in_groups_and_posts_to_forum_topics(telegram):
    fake, sender = telegram
    target = {"chat_id": "-1005", "thread_id": "77", "message_id": 12, "quote": True}
    ids = asyncio.run(sender.send(target, "hi _there_"))
    (sent,) = fake.sent_messages(-1005)
    assert sent["text"] == "hi <i>there</i>" and sent["message_thread_id"] == 77
    assert sent["reply_parameters"]["message_id"] == 12
    assert ids == ["1"]


def test_telegram_errors_become_retryable_or_final_failures(telegram):
    fake, sender = telegram
    target = {"chat_id": 42}
    fake.fail_next("sendMessage", error_code=429, retry_after=9)
    with pytest.raises(DeliveryFailed) as limited:
        asyncio.run(sender.send(target, "x"))
    assert limited.value.retryable and limited.value.retry_after == 9
    fake.fail_next("sendMessage", error_code=403)
    with pytest.raises(DeliveryFailed) as blocked:
        asyncio.run(sender.send(target, "x"))
    assert not blocked.value.retryable
    fake.fail_next("sendMessage", error_code=500)
    with pytest.raises(DeliveryFailed) as down:
        asyncio.run(sender.send(target, "x"))
    assert down.value.retryable


def test_telegram_downloads_files_and_reports_its_name(telegram):
    fake, sender = telegram
    fake.add_file("voice-9", b"OggS...", "voice/file_9.oga")
    assert asyncio.run(sender.download("voice-9")) == b"OggS..."
    assert asyncio.run(sender.get_me())["username"] == "iris_test_bot"
    with pytest.raises(DeliveryFailed):
        asyncio.run(sender.download("missing"))


def test_slack_posts_mrkdwn_in_threads_and_maps_errors(slack):
    fake, sender = slack
    ids = asyncio.run(sender.send({"channel": "C1", "thread_ts": "1700000000.000100"},
                                  "**done**"))
    (posted,) = fake.posted("C1")
    assert posted["text"] == "*done*" and posted["thread_ts"] == "1700000000.000100"
    assert fake.message("C1", ids[0])["text"] == "*done*"
    fake.fail_next("chat.postMessage", status=200, error="channel_not_found")
    with pytest.raises(DeliveryFailed) as missing:
        asyncio.run(sender.send({"channel": "C404"}, "x"))
    assert not missing.value.retryable
    fake.fail_next("chat.postMessage", status=429, retry_after=4)
    with pytest.raises(DeliveryFailed) as limited:
        asyncio.run(sender.send({"channel": "C1"}, "x"))
    assert limited.value.retry_after == 4


class Flaky:
    """A part sender that fails once on its second part."""

    def __init__(self):
        self.sent = []
        self.failed = False

    def parts(self, text):
        return text.split("|")

    async def send(self, target, text):
        raise AssertionError("the service must send part by part")

    async def send_part(self, target, part, index):
        if index == 1 and not self.failed:
            self.failed = True
            raise DeliveryFailed("boom")
        self.sent.append(part)
        return f"id-{index}"


def test_a_retried_delivery_sends_only_the_parts_still_missing(store):
    user = store.users.for_account("telegram:1")
    delivery_id = store.deliveries.add(user, source="inbox:1", platform="telegram",
                                       chat_key="telegram:1", target={"chat_id": 1},
                                       text="one|two|three")
    sender = Flaky()
    service = DeliveryService(store, {"telegram": sender})
    assert asyncio.run(service.attempt(user, delivery_id)) == "pending"
    assert store.deliveries.get(user, delivery_id).platform_ids == ["id-0"]
    assert asyncio.run(service.attempt(user, delivery_id)) == "pending"  # backing off
    assert store.deliveries.get(user, delivery_id).attempts == 1
    store.clock.advance(backoff(1))
    assert asyncio.run(service.attempt(user, delivery_id)) == "sent"
    assert sender.sent == ["one", "two", "three"]
    assert store.deliveries.get(user, delivery_id).platform_ids == ["id-0", "id-1", "id-2"]
    assert asyncio.run(service.attempt(user, delivery_id)) == "sent"
    assert sender.sent == ["one", "two", "three"]
