"""The requests Iris makes of Telegram and Slack, as the fakes recorded them, bound to the
installed SDKs' real signatures (python-telegram-bot 22.8 ``telegram.Bot``, slack_sdk 3.47
``slack_sdk.WebClient``), as iris_testing/sandboxes does for Modal and Daytona: every method the
fakes answered exists in the SDK and every parameter is one the SDK names. Discord and WhatsApp
have no SDK here; their fakes follow the API references (docs/testing.md)."""

from __future__ import annotations

import inspect
import json
import re
from typing import Any

from iris_testing.platform_stack import platform_stack
from tests.functions.clarify_common import ASK


def named_parameters(method: Any) -> set[str]:
    return {p.name for p in inspect.signature(method).parameters.values()
            if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) and p.name != "self"}


def unknown(sdk: type, calls: list[tuple[str, dict[str, Any]]], name_of) -> list[str]:
    problems = []
    for method, params in calls:
        real = getattr(sdk, name_of(method), None)
        if real is None:
            problems.append(f"{method}: no such method in {sdk.__name__}")
            continue
        extra = set(params) - named_parameters(real)
        if extra:
            problems.append(f"{method}: {sorted(extra)} not parameters of {real.__qualname__}")
    return problems


def test_telegram_and_slack_calls_fit_the_sdks(scripted_llm, iris_home):
    from slack_sdk import WebClient
    from telegram import Bot

    llm, model = scripted_llm
    llm.tool_call("clarify", ASK).reply("Large it is.").reply("hello on Slack")
    with platform_stack(iris_home, model=model) as stack:
        stack.telegram_post(stack.telegram.make_update("order me a coffee"))
        stack.wait(lambda: stack.telegram.sent_messages(4242) and stack.settled())
        (sent,) = stack.telegram.sent_messages(4242)
        data = sent["reply_markup"]["inline_keyboard"][1][0]["callback_data"]
        row = stack.rt.store.db.one("SELECT platform_ids FROM deliveries")
        question = stack.telegram.message(4242, int(json.loads(row["platform_ids"])[0]))
        stack.telegram_post(stack.telegram.make_press(question, data))
        stack.wait(lambda: len(stack.telegram.sent_messages(4242)) == 2 and stack.settled())
        stack.slack_post(stack.slack.event_payload(
            stack.slack.message_event("hi", channel="D1", channel_type="im")))
        stack.wait(lambda: stack.slack.methods_called().count("chat.postMessage") >= 1
                   and stack.settled())
        telegram_calls, slack_calls = stack.telegram.calls, stack.slack.calls
    telegram_methods = {m for m, _ in telegram_calls}
    assert {"sendMessage", "answerCallbackQuery", "editMessageReplyMarkup"} <= telegram_methods
    assert unknown(Bot, telegram_calls,
                   lambda m: re.sub(r"(?<!^)(?=[A-Z])", "_", m).lower()) == []
    assert "chat.postMessage" in {m for m, _ in slack_calls}
    assert unknown(WebClient, slack_calls, lambda m: m.replace(".", "_")) == []


def test_a_call_the_sdk_does_not_name_is_caught():
    from telegram import Bot

    assert unknown(Bot, [("sendMessage", {"chat_id": 1, "txet": "typo"})],
                   lambda m: "send_message") == [
        "sendMessage: ['txet'] not parameters of Bot.send_message"]
