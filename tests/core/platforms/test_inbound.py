"""Reading platform events: which messages are for Iris, whose chat they belong to, and what
text the turn sees."""

from core.platforms.slack_inbound import (
    SlackCommand,
    SlackEnvelope,
    parse_command,
    parse_event,
    readable,
)
from core.platforms.telegram_inbound import BotIdentity, TgUpdate, parse_update, utf16_slice
from iris_testing.slack_api import FakeSlack
from iris_testing.telegram_api import FakeTelegram

BOT = BotIdentity(7000001, "iris_test_bot")


def tg(update, bot=BOT, mode="mention"):
    return parse_update(TgUpdate.model_validate(update), bot, group_mode=mode)


def test_telegram_private_message_and_its_keys():
    parsed = tg(FakeTelegram().make_update("hi", user_id=5, message_id=9))
    message = parsed.message
    assert (message.chat_key, message.account, message.platform_message_id) == (
        "telegram:5", "telegram:5", "5:9")
    assert not message.is_group and parsed.group_ref is None


def test_telegram_forum_topics_are_their_own_chats_and_captions_are_text():
    update = FakeTelegram().make_update(None, chat_type="supergroup")
    update["message"].update(caption="@iris_test_bot look", is_topic_message=True,
                             message_thread_id=55, photo=[{"file_id": "p"}],
                             caption_entities=[{"type": "mention", "offset": 0, "length": 14}])
    message = tg(update).message
    assert message.thread_id == "55" and message.chat_key.endswith(":55")
    assert message.text == "[Ada] look"


def test_telegram_mentions_count_utf16_offsets():
    text = "😀 @iris_test_bot hello"
    assert utf16_slice(text, 3, 14) == "@iris_test_bot"
    update = FakeTelegram().make_update(text, chat_type="group", entities=[
        {"type": "mention", "offset": 3, "length": 14}])
    assert tg(update).message.text == "[Ada] 😀 hello"
    other = FakeTelegram().make_update(text.replace("iris", "otto"), chat_type="group",
                                       entities=[{"type": "mention", "offset": 3, "length": 14}])
    assert tg(other).message is None


def test_telegram_text_mentions_replies_and_unknown_usernames():
    fake = FakeTelegram()
    text_mention = fake.make_update("Iris, hi", chat_type="group", entities=[
        {"type": "text_mention", "offset": 0, "length": 4,
         "user": {"id": 7000001, "is_bot": True, "first_name": "Iris"}}])
    assert tg(text_mention).message is not None
    reply = fake.make_update("thanks", chat_type="group", reply_to={
        "message_id": 3, "from": fake.bot_user, "chat": {"id": -1, "type": "group"}, "date": 1})
    assert tg(reply, bot=BotIdentity(7000001, None)).message is not None
    mention = fake.make_update("@iris_test_bot hi", chat_type="group", entities=[
        {"type": "mention", "offset": 0, "length": 14}])
    assert tg(mention, bot=BotIdentity(7000001, None)).message is None
    assert tg(mention, bot=BotIdentity(7000001, None), mode="all").message is not None


def test_telegram_updates_that_are_not_for_a_turn():
    fake = FakeTelegram()
    bot_sender = fake.make_update("beep")
    bot_sender["message"]["from"]["is_bot"] = True
    assert tg(bot_sender).reason == "not from a person"
    anonymous = fake.make_update("hi", chat_type="supergroup")
    del anonymous["message"]["from"]
    assert tg(anonymous).message is None
    channel = fake.make_update("post", chat_type="channel")
    assert "not supported" in tg(channel).reason
    assert tg({"update_id": 1, "edited_message": fake.make_update("x")["message"]}).message is None


def test_telegram_voice_notes_become_attachments():
    update = FakeTelegram().make_update(None, voice={"file_id": "v-1"})
    message = tg(update).message
    (voice,) = message.attachments
    assert (voice.kind, voice.ref, voice.mime_type) == ("voice", "v-1", "audio/ogg")
    assert message.text == ""


def slack_parse(event, mode="mention", engaged=lambda group, chat: False):
    envelope = SlackEnvelope.model_validate(FakeSlack().event_payload(event))
    return parse_event(envelope, bot_user_id="UBOT", engaged=engaged, group_mode=mode)


def test_slack_dm_threads_are_their_own_chats():
    fake = FakeSlack()
    top = slack_parse(fake.message_event("hi", channel="D1", channel_type="im")).message
    threaded = slack_parse(fake.message_event("more", channel="D1", channel_type="im",
                                              thread_ts="1700000000.000100")).message
    assert top.chat_key == "slack:T1:D1" and top.meta["thread_ts"] is None
    assert threaded.chat_key == "slack:T1:D1:1700000000.000100"
    assert top.account == "slack:T1/U123" and not top.is_group


def test_slack_channel_messages_need_a_mention_or_a_thread_iris_is_in():
    fake = FakeSlack()
    plain = fake.message_event("lunch?", channel="G1", channel_type="group")
    assert slack_parse(plain).message is None
    assert slack_parse(plain, mode="all").message.chat_key == "slack:T1:G1"
    threaded = fake.message_event("and?", channel="C1", channel_type="channel",
                                  thread_ts="1700000000.000900")
    seen = []
    parsed = slack_parse(threaded, engaged=lambda group, chat: seen.append((group, chat)) or True)
    assert parsed.message is not None and parsed.group_ref == "T1:C1"
    assert seen == [("T1:C1", "slack:T1:C1:1700000000.000900")]
    mpim = fake.message_event("all of us", channel="G2", channel_type="mpim")
    assert slack_parse(mpim, mode="all").message.is_group


def test_slack_text_is_made_readable():
    assert readable("<@UBOT> see <https://x.dev|the docs> &amp; <https://y.dev> &lt;3", "UBOT") \
        == "see the docs (https://x.dev) & https://y.dev <3"
    assert readable("<@U0THER> hi", None) == "hi"


def test_slack_commands():
    base = {"command": "/iris", "user_id": "U1", "channel_id": "D9", "team_id": "T1",
            "response_url": "https://hooks.slack.com/x", "trigger_id": "t"}
    assert parse_command(SlackCommand.model_validate({**base, "text": ""})).message.text == "/help"
    dm = parse_command(SlackCommand.model_validate({**base, "text": "model openai/gpt-4o"}))
    assert dm.message.text == "/model openai/gpt-4o" and not dm.message.is_group
    assert dm.message.meta["response_url"] == "https://hooks.slack.com/x"
    channel = parse_command(SlackCommand.model_validate({**base, "channel_id": "C3",
                                                          "text": "/new"}))
    assert channel.message.is_group and channel.group_ref == "T1:C3"
