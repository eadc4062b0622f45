import asyncio
from datetime import timedelta

import httpx
import pytest
from telegram import Bot, Update
from telegram.constants import ChatAction, ParseMode
from telegram.error import BadRequest, EndPointNotFound, InvalidToken, NetworkError, RetryAfter

from iris_testing.server import serve
from iris_testing.telegram_api import FakeTelegram

TOKEN = "123456:test-token"


@pytest.fixture
def telegram():
    return FakeTelegram()


@pytest.fixture
def url(telegram):
    with serve(telegram.app) as server:
        yield server.url


def run_bot(url, action, token=TOKEN, initialize=False):
    async def main():
        bot = Bot(token, base_url=f"{url}/bot", base_file_url=f"{url}/file/bot")
        if initialize:
            await bot.initialize()
        try:
            return await action(bot)
        finally:
            await bot.shutdown()

    return asyncio.run(main())


def test_uninitialised_bot_sends_a_message(telegram, url):
    async def send(bot):
        first = await bot.send_message(chat_id=42, text="hello")
        second = await bot.send_message(chat_id=42, text="again")
        return first, second

    first, second = run_bot(url, send)

    assert first.text == "hello"
    assert first.chat.id == 42
    assert first.from_user.is_bot
    assert second.message_id == first.message_id + 1
    assert telegram.methods_called() == ["sendMessage", "sendMessage"]
    assert [m["text"] for m in telegram.sent_messages(42)] == ["hello", "again"]
    assert telegram.sent_messages(chat_id=7) == []


def test_get_me_and_reply_markup_params_are_json_decoded(telegram, url):
    async def act(bot):
        me = await bot.get_me()
        await bot.send_message(
            chat_id=-1001234,
            text="12",
            reply_markup={"inline_keyboard": [[{"text": "Yes", "callback_data": "y"}]]},
        )
        return me

    me = run_bot(url, act)

    assert me.username == "iris_test_bot"
    method, params = telegram.calls[-1]
    assert method == "sendMessage"
    assert params["chat_id"] == -1001234
    assert params["text"] == "12"
    assert params["reply_markup"]["inline_keyboard"][0][0]["callback_data"] == "y"


def test_chat_action_edit_and_commands(telegram, url):
    async def act(bot):
        await bot.send_chat_action(chat_id=42, action=ChatAction.TYPING)
        sent = await bot.send_message(chat_id=42, text="thinking…")
        edited = await bot.edit_message_text("done", chat_id=42, message_id=sent.message_id)
        await bot.set_my_commands([("start", "Start"), ("help", "Help")])
        try:
            await bot.edit_message_text("done", chat_id=42, message_id=sent.message_id)
        except BadRequest as error:
            return sent, edited, error

    sent, edited, error = run_bot(url, act)

    assert edited.text == "done"
    assert "message is not modified" in error.message.lower()
    assert telegram.message(42, sent.message_id)["text"] == "done"
    assert telegram.calls[0] == ("sendChatAction", {"chat_id": 42, "action": "typing"})
    commands = dict(telegram.calls)["setMyCommands"]["commands"]
    assert commands == [
        {"command": "start", "description": "Start"},
        {"command": "help", "description": "Help"},
    ]


def test_webhook_with_secret_token(telegram, url):
    async def act(bot):
        await bot.set_webhook("https://iris.example/telegram", secret_token="s3cret")
        info = await bot.get_webhook_info()
        await bot.delete_webhook()
        return info, await bot.get_webhook_info()

    info, after = run_bot(url, act)

    assert info.url == "https://iris.example/telegram"
    assert after.url == ""
    set_params = dict(telegram.calls)["setWebhook"]
    assert set_params["secret_token"] == "s3cret"
    assert telegram.webhook is None


def test_plain_http_webhook_is_refused(url):
    with pytest.raises(BadRequest, match=r"(?i)https url must be provided"):
        run_bot(url, lambda bot: bot.set_webhook("http://insecure.example/hook"))


def test_file_download(telegram, url):
    telegram.add_file("voice-77", b"OggS fake audio")

    async def act(bot):
        file = await bot.get_file("voice-77")
        return bytes(await file.download_as_bytearray())

    assert run_bot(url, act) == b"OggS fake audio"
    with pytest.raises(BadRequest, match=r"(?i)invalid file_id"):
        run_bot(url, lambda bot: bot.get_file("missing"))


def test_failure_injection(telegram, url):
    telegram.fail_next("sendMessage", times=2, error_code=500)
    telegram.fail_next("sendMessage", error_code=429, retry_after=3)
    telegram.fail_next("sendMessage", error_code=400, description="Bad Request: chat not found")

    async def attempt(bot):
        outcomes = []
        for _ in range(5):
            try:
                outcomes.append(await bot.send_message(chat_id=1, text="x"))
            except (NetworkError, BadRequest, RetryAfter) as error:
                outcomes.append(error)
        return outcomes

    outcomes = run_bot(url, attempt)

    assert [type(o).__name__ for o in outcomes] == [
        "NetworkError",
        "NetworkError",
        "RetryAfter",
        "BadRequest",
        "Message",
    ]
    assert outcomes[2].retry_after in (3, timedelta(seconds=3))
    assert len(telegram.calls) == 5
    assert len(telegram.sent_messages()) == 1


def test_markdown_rejection_allows_plain_text_fallback(telegram, url):
    telegram.reject_markdown = True

    async def send(bot):
        try:
            return await bot.send_message(chat_id=5, text="*bold", parse_mode=ParseMode.MARKDOWN)
        except BadRequest as error:
            assert "can't parse entities" in error.message.lower()
            return await bot.send_message(chat_id=5, text="*bold")

    assert run_bot(url, send).text == "*bold"
    assert telegram.sent_messages(5) == [{"chat_id": 5, "text": "*bold"}]


def test_too_long_message_is_refused(url):
    with pytest.raises(BadRequest, match=r"(?i)too long"):
        run_bot(url, lambda bot: bot.send_message(chat_id=5, text="x" * 4097))


def test_unknown_method_and_wrong_token(url):
    with pytest.raises(EndPointNotFound):
        run_bot(url, lambda bot: bot.do_api_request("sendTelepathy"), initialize=True)
    with pytest.raises(InvalidToken):
        run_bot(url, lambda bot: bot.do_api_request("sendTelepathy"))

    response = httpx.post(f"{url}/bot{TOKEN}/sendTelepathy")
    assert response.json() == {
        "ok": False,
        "error_code": 404,
        "description": "Not Found: method not found",
    }


def test_token_check():
    telegram = FakeTelegram(token=TOKEN)
    with serve(telegram.app) as server, pytest.raises(InvalidToken):
        run_bot(server.url, lambda bot: bot.send_message(chat_id=1, text="x"), token="1:wrong")


def test_make_update_parses_with_ptb():
    telegram = FakeTelegram()
    bot = Bot(TOKEN)

    update = Update.de_json(telegram.make_update("/start now", user_id=99), bot)
    group = Update.de_json(
        telegram.make_update("hi", chat_id=-100555, chat_type="supergroup", reply_to=3), bot
    )
    voice = Update.de_json(telegram.make_update(None, voice={"file_id": "v1", "duration": 4}), bot)

    assert update.effective_chat.id == 99
    assert update.effective_user.id == 99
    assert update.message.text == "/start now"
    assert update.message.entities[0].type == "bot_command"
    assert group.effective_chat.type == "supergroup"
    assert group.message.reply_to_message.from_user.is_bot
    assert voice.message.voice.file_id == "v1"
    assert voice.message.voice.duration in (4, timedelta(seconds=4))
    assert update.update_id != group.update_id


def test_json_and_query_bodies_are_decoded_too(telegram, url):
    httpx.post(
        f"{url}/bot{TOKEN}/sendMessage",
        json={"chat_id": 8, "text": "42", "reply_markup": '{"remove_keyboard": true}'},
    )
    httpx.get(f"{url}/bot{TOKEN}/sendChatAction", params={"chat_id": "8", "action": "typing"})

    assert telegram.calls == [
        ("sendMessage", {"chat_id": 8, "text": "42", "reply_markup": {"remove_keyboard": True}}),
        ("sendChatAction", {"chat_id": 8, "action": "typing"}),
    ]
