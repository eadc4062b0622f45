"""Transcription is the user's usage, over real HTTP: a voice note arrives at the Telegram
webhook, its audio is fetched from the fake Bot API and transcribed by litellm against the
scripted OpenAI-compatible server's ``/v1/audio/transcriptions`` (whisper-1, which litellm prices
per second of audio), and the call is counted for its owner alone: in the store (kind
``transcription``), in ``/usage`` and on the dashboard's usage page. A call the provider refused
is not counted; an attempt retried after a server error is counted once, for the answer that
was charged."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest

from core.clock import ManualClock
from core.dashboard.signin import issue_link
from core.model.llm import LiteLLMModel, load_litellm
from iris_testing.llm_server import ScriptedLLM
from iris_testing.platform_stack import platform_stack
from iris_testing.server import serve
from tests.clocks import NOW

ADA, BOB = 4242, 5151
SECONDS = 7.0


def per_second() -> float:
    """whisper-1's price per second of audio in litellm's own cost map."""
    return float(load_litellm().model_cost["whisper-1"]["input_cost_per_second"])


@pytest.fixture
def voiced(iris_home):
    llm = ScriptedLLM()
    llm.transcriptions.text, llm.transcriptions.seconds = "what time is it", SECONDS
    clock = ManualClock(NOW)
    with serve(llm.app) as server:
        model = LiteLLMModel("openai/scripted-model", api_base=f"{server.url}/v1",
                             api_key="sk-test")
        with platform_stack(iris_home, model=model, clock=clock,
                            IRIS_TRANSCRIPTION_MODEL="openai/whisper-1",
                            IRIS_TRANSCRIPTION_API_BASE=f"{server.url}/v1",
                            IRIS_TRANSCRIPTION_API_KEY="sk-t") as stack:
            yield llm, stack, clock


def send_voice(stack, user_id: int = ADA, file_id: str = "voice-1") -> None:
    stack.telegram.add_file(file_id, b"OggS-fake-audio", f"voice/{file_id}.oga")
    update = stack.telegram.make_update(None, user_id=user_id, voice={"file_id": file_id})
    assert stack.telegram_post(update).json()["status"] == "recorded"


def ask_usage(stack, user_id: int, replies_before: int) -> str:
    stack.telegram_post(stack.telegram.make_update("/usage", user_id=user_id))
    stack.wait(lambda: len(stack.telegram.sent_messages(user_id)) == replies_before + 1)
    return stack.telegram.sent_messages(user_id)[-1]["text"]


def test_a_voice_notes_transcription_is_counted_for_its_owner(voiced):
    llm, stack, clock = voiced
    llm.reply("It is noon.")
    send_voice(stack)
    stack.wait(lambda: stack.telegram.sent_messages(ADA) and stack.settled())
    assert stack.telegram.sent_messages(ADA)[0]["text"] == "It is noon."
    assert llm.requests[0]["messages"][-1]["content"] == "[voice note] what time is it"
    (upload,) = llm.transcriptions.uploads
    assert upload.model == "whisper-1" and upload.data == b"OggS-fake-audio"

    store = stack.rt.store
    ada = store.users.resolve(f"telegram:{ADA}")
    (entry,) = store.db.query("SELECT id FROM inbox WHERE user_id = ?", (ada,))
    rows = {u.kind: u for u in store.usage.for_inbox(ada, entry["id"])}
    assert set(rows) == {"chat", "transcription"}
    heard = rows["transcription"]
    cost = SECONDS * per_second()
    assert heard.model == "openai/whisper-1" and heard.calls == 1
    assert heard.cost_usd == pytest.approx(cost) and cost > 0
    assert heard.prompt_tokens == heard.completion_tokens == 0
    (row,) = store.db.query("SELECT created_at FROM usage WHERE user_id = ? AND kind = ?",
                            (ada, "transcription"))
    assert row["created_at"] == NOW.timestamp()  # on the store's clock

    clock.advance(60)
    shown = ask_usage(stack, ADA, 1)
    others = [u for u in store.db.query("SELECT kind, calls, cost_usd FROM usage WHERE"
                                        " user_id = ?", (ada,)) if u["kind"] != "transcription"]
    calls = sum(u["calls"] for u in others) + 1  # the turn's, its title's, the transcription
    total = cost + sum(u["cost_usd"] or 0.0 for u in others)  # the scripted model is unpriced
    assert f"All time: {calls} model calls" in shown and f"${total:.4f}" in shown, shown
    assert f"of which voice notes transcribed (transcription): 1 call, ${cost:.4f}" in shown

    bob_shown = ask_usage(stack, BOB, 0)
    assert "All time: 0 model calls" in bob_shown and "transcription" not in bob_shown
    bob = store.users.resolve(f"telegram:{BOB}")
    assert store.usage.by_kind(bob) == {}
    assert store.usage.by_kind(ada)["transcription"].calls == 1


def test_a_refused_transcription_is_not_billed(voiced):
    llm, stack, _ = voiced
    llm.transcriptions.fail(400)
    send_voice(stack)
    stack.wait(lambda: stack.telegram.sent_messages(ADA) and stack.settled())
    assert stack.telegram.sent_messages(ADA)[0]["text"].startswith(
        "I could not transcribe your voice note.")
    assert len(llm.transcriptions.uploads) == 1 and llm.transcriptions.answered == 0
    ada = stack.rt.store.users.resolve(f"telegram:{ADA}")
    assert stack.rt.store.usage.totals(ada).calls == 0
    assert "All time: 0 model calls" in ask_usage(stack, ADA, 1)


def test_a_transcription_retried_after_a_server_error_is_billed_once(voiced):
    """The OpenAI client retries a 500 by itself: the failed attempt carries no usage (nothing
    was charged), the answered one is counted once with its cost."""
    llm, stack, _ = voiced
    llm.transcriptions.fail(500)
    llm.reply("It is noon.")
    send_voice(stack)
    stack.wait(lambda: stack.telegram.sent_messages(ADA) and stack.settled())
    assert stack.telegram.sent_messages(ADA)[0]["text"] == "It is noon."
    assert len(llm.transcriptions.uploads) == 2 and llm.transcriptions.answered == 1
    ada = stack.rt.store.users.resolve(f"telegram:{ADA}")
    heard = stack.rt.store.usage.by_kind(ada)["transcription"]
    assert heard.calls == 1 and heard.cost_usd == pytest.approx(SECONDS * per_second())


def test_each_answered_transcription_is_billed(voiced):
    """Two voice notes, two transcriptions the provider answered: two counted calls."""
    llm, stack, clock = voiced
    llm.reply("First.").reply("Second.")
    send_voice(stack, file_id="voice-1")
    stack.wait(lambda: stack.telegram.sent_messages(ADA) and stack.settled())
    clock.advance(30)
    send_voice(stack, file_id="voice-2")
    stack.wait(lambda: len(stack.telegram.sent_messages(ADA)) == 2 and stack.settled())
    ada = stack.rt.store.users.resolve(f"telegram:{ADA}")
    heard = stack.rt.store.usage.by_kind(ada)["transcription"]
    assert heard.calls == 2 and heard.cost_usd == pytest.approx(2 * SECONDS * per_second())


def test_the_dashboard_usage_page_shows_transcription(voiced):
    llm, stack, clock = voiced
    llm.reply("It is noon.")
    send_voice(stack)
    stack.wait(lambda: stack.telegram.sent_messages(ADA) and stack.settled())
    store = stack.rt.store
    ada = store.users.resolve(f"telegram:{ADA}")
    cost = SECONDS * per_second()
    clock.advance(timedelta(minutes=5).total_seconds())
    with httpx.Client(base_url=stack.url, timeout=60) as web:
        link = issue_link(store, ada, is_owner=False, issued_by="test", base_url=stack.url)
        assert web.get(link.url).status_code == 200
        opened = web.post("/ui/signin", data={"t": link.token}, headers={"origin": stack.url})
        assert opened.status_code == 303
        page = web.get(f"/ui/u/{ada}/usage")
    assert page.status_code == 200
    kinds = page.text.split('id="kinds-h"')[1].split("</table>")[0]
    assert "<td>transcription</td><td>1</td>" in kinds and f"${cost:.4f}" in kinds
    assert "openai/whisper-1" in page.text


@pytest.mark.anyio
async def test_a_model_billed_by_token_records_its_tokens_and_litellms_price(iris_home):
    """gpt-4o-mini-transcribe answers with token usage (audio in, text out): the row keeps the
    tokens, and the cost is litellm's, from its per-token rates."""
    from core.config import load_settings
    from core.platforms.voice import transcribe_audio

    llm = ScriptedLLM()
    llm.transcriptions.text = "remind me at noon"
    with serve(llm.app) as server:
        settings = load_settings({"IRIS_HOME": str(iris_home),
                                  "IRIS_TRANSCRIPTION_MODEL": "openai/gpt-4o-mini-transcribe",
                                  "IRIS_TRANSCRIPTION_API_BASE": f"{server.url}/v1",
                                  "IRIS_TRANSCRIPTION_API_KEY": "sk-t"})
        text, usage = await transcribe_audio(settings, b"OggS-fake-audio", "voice.ogg")
    assert text == "remind me at noon" and usage.kind == "transcription"
    billed = llm.transcriptions.usage("gpt-4o-mini-transcribe")
    assert (usage.prompt_tokens, usage.completion_tokens) == (billed["input_tokens"],
                                                              billed["output_tokens"])
    rates = load_litellm().model_cost["gpt-4o-mini-transcribe"]
    expected = (billed["input_token_details"]["audio_tokens"]
                * rates["input_cost_per_audio_token"]
                + billed["output_tokens"] * rates["output_cost_per_token"])
    assert usage.cost_usd == pytest.approx(expected) and expected > 0
