"""Spoken replies on Telegram through real HTTP: a voice note is transcribed (fake Whisper), the
scripted model answers through litellm, the text is sent, and the answer comes back as a voice
note too: litellm's speech API against the scripted server's ``/v1/audio/speech``, uploaded
with sendVoice to the fake Bot API. A failed send is retried without doubling the note; a
failing speech call is retried by the same delivery (on a ManualClock, moved past its backoff)
and at worst costs only the voice note; ``/voice off`` turns it off for one person."""

import pytest

from core.clock import ManualClock
from core.model.llm import LiteLLMModel
from core.platforms.tts import SPEECH_ATTEMPTS
from iris_testing.llm_server import ScriptedLLM
from iris_testing.platform_stack import platform_stack
from iris_testing.server import serve
from tests.clocks import NOW
from tests.functions.test_voice import FakeWhisper, voice_update


@pytest.fixture
def voiced(iris_home):
    llm, whisper = ScriptedLLM(), FakeWhisper(text="what time is it")
    with serve(llm.app) as model_server, serve(whisper.app) as whisper_server:
        model = LiteLLMModel("openai/scripted-model", api_base=f"{model_server.url}/v1",
                             api_key="sk-test")
        env = {"IRIS_TRANSCRIPTION_MODEL": "openai/whisper-1",
               "IRIS_TRANSCRIPTION_API_BASE": f"{whisper_server.url}/v1",
               "IRIS_TRANSCRIPTION_API_KEY": "sk-t", "IRIS_TTS_MODEL": "openai/tts-1",
               "IRIS_TTS_API_BASE": f"{model_server.url}/v1", "IRIS_TTS_API_KEY": "sk-s",
               "IRIS_VOICE_REPLIES": "true"}

        def stack(clock=None, **extra):
            more = {} if clock is None else {"clock": clock}
            return platform_stack(iris_home, model=model, sweep_seconds=0.2, **more,
                                  **{**env, **extra})

        yield llm, stack


def spoken(stack):
    return stack.rt.store.db.one(
        "SELECT status, attempts FROM deliveries WHERE source LIKE 'voice:%'")


def failed_attempts(stack):
    """How many attempts of the voice delivery have failed and been released."""
    row = stack.rt.store.db.one(
        "SELECT attempts FROM deliveries WHERE source LIKE 'voice:%' AND claimed_by IS NULL"
        " AND last_error IS NOT NULL")
    return 0 if row is None else row["attempts"]


def test_a_voice_note_is_answered_in_text_and_voice(voiced):
    llm, make = voiced
    llm.reply("It is **noon**.")
    with make() as stack:
        stack.telegram.fail_next("sendVoice", error_code=502)  # the first upload fails
        stack.telegram_post(voice_update(stack))
        stack.wait(lambda: stack.telegram.sent_media(4242) and stack.settled())
        (text,) = stack.telegram.sent_messages(4242)
        assert "noon" in text["text"]
        (note,) = stack.telegram.sent_media(4242)
        assert note["kind"] == "voice" and note["data"] == llm.speech_audio
        assert stack.telegram.methods_called().count("sendVoice") == 2  # retried once
        (request,) = llm.speech_requests
        assert request["input"] == "It is noon." and request["model"] == "tts-1"
        assert request["response_format"] == "opus" and request["voice"] == "alloy"
        assert dict(spoken(stack)) == {"status": "sent", "attempts": 2}

        llm.reply("Noted.")
        stack.telegram_post(stack.telegram.make_update("/voice off"))
        stack.wait(lambda: len(stack.telegram.sent_messages(4242)) == 2)
        assert "Voice replies are off" in stack.telegram.sent_messages(4242)[1]["text"]
        stack.telegram_post(voice_update(stack))
        stack.wait(lambda: len(stack.telegram.sent_messages(4242)) == 3 and stack.settled())
        assert len(stack.telegram.sent_media(4242)) == 1  # off for this person now
        assert len(llm.speech_requests) == 1


def test_a_failing_speech_call_is_retried_and_sends_one_note(voiced):
    """The speech call answers 500 once, then works: the voice delivery backs off, speaks on
    its second attempt and sends one voice note; the priced call is the user's usage."""
    llm, make = voiced
    llm.speech_status = 500
    llm.reply("It is noon.").reply("unused")
    clock = ManualClock(NOW)
    with make(clock=clock) as stack:
        stack.telegram_post(voice_update(stack))
        stack.wait(lambda: failed_attempts(stack) == 1 and stack.telegram.sent_messages(4242))
        assert stack.telegram.sent_media(4242) == [] and spoken(stack)["status"] == "pending"
        llm.speech_status = 200
        clock.advance(60)  # past the first backoff
        stack.wait(lambda: stack.telegram.sent_media(4242) and stack.settled())
        (note,) = stack.telegram.sent_media(4242)
        assert note["kind"] == "voice" and note["data"] == llm.speech_audio
        assert dict(spoken(stack)) == {"status": "sent", "attempts": 2}
        assert len(llm.speech_requests) == 2
        clock.advance(3600)  # nothing is due any more: the sweep sends no second note
        stack.wait(lambda: stack.settled())
        assert len(stack.telegram.sent_media(4242)) == 1

        store = stack.rt.store
        user = store.db.scalar("SELECT user_id FROM inbox")
        speech = store.usage.by_model(user)["openai/tts-1"]
        assert speech.calls == 1 and speech.cost_usd is not None and speech.cost_usd > 0
        stack.telegram_post(stack.telegram.make_update("/usage"))
        stack.wait(lambda: len(stack.telegram.sent_messages(4242)) == 2)
        shown = stack.telegram.sent_messages(4242)[1]["text"]
        assert "This session: 3 model calls" in shown  # the turn, the transcription, the speech


def test_a_speech_call_that_keeps_failing_still_sends_the_text(voiced):
    llm, make = voiced
    llm.speech_status = 500
    llm.reply("It is noon.")
    clock = ManualClock(NOW)
    with make(clock=clock) as stack:
        stack.telegram_post(voice_update(stack))
        for attempt in range(1, SPEECH_ATTEMPTS + 1):
            stack.wait(lambda n=attempt: failed_attempts(stack) == n)
            clock.advance(3600)
        stack.wait(lambda: stack.settled())
        assert stack.telegram.sent_messages(4242)[0]["text"] == "It is noon."
        assert stack.telegram.sent_media(4242) == []
        assert dict(spoken(stack)) == {"status": "failed", "attempts": SPEECH_ATTEMPTS}
        assert len(llm.speech_requests) == SPEECH_ATTEMPTS
        user = stack.rt.store.db.scalar("SELECT user_id FROM inbox")
        assert "openai/tts-1" not in stack.rt.store.usage.by_model(user)  # nothing was spoken


def test_mp3_speech_goes_as_an_audio_file_and_text_messages_get_no_voice(voiced):
    llm, make = voiced
    llm.speech_audio = b"ID3\x04\x00mp3-bytes"
    llm.reply("Typed answer.").reply("Spoken answer.")
    with make() as stack:
        stack.telegram_post(stack.telegram.make_update("what time is it"))
        stack.wait(lambda: stack.telegram.sent_messages(4242) and stack.settled())
        stack.telegram_post(voice_update(stack))
        stack.wait(lambda: stack.telegram.sent_media(4242) and stack.settled())
        (note,) = stack.telegram.sent_media(4242)
        assert note["kind"] == "audio" and note["data"] == llm.speech_audio
        assert [r["input"] for r in llm.speech_requests] == ["Spoken answer."]


def test_voice_replies_are_off_by_default(voiced):
    llm, make = voiced
    llm.reply("It is noon.").reply("ok")
    with make(IRIS_VOICE_REPLIES="false") as stack:
        stack.telegram_post(voice_update(stack))
        stack.wait(lambda: stack.telegram.sent_messages(4242) and stack.settled())
        assert stack.telegram.sent_media(4242) == [] and llm.speech_requests == []
        stack.telegram_post(stack.telegram.make_update("/voice on"))
        stack.wait(lambda: len(stack.telegram.sent_messages(4242)) == 2)
        assert "Voice replies are on" in stack.telegram.sent_messages(4242)[1]["text"]
