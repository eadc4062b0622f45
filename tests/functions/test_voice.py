"""Telegram voice notes end to end: the file is fetched through the Bot API fake and transcribed
by litellm against a fake OpenAI transcription endpoint; with no transcription model the user
is told voice is off and no model call is made."""

import threading

from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from iris_testing.platform_stack import platform_stack
from iris_testing.server import serve


class FakeWhisper:
    """``POST /v1/audio/transcriptions`` as OpenAI answers it."""

    def __init__(self, text="what is on my calendar", status=200):
        self.text, self.status = text, status
        self.uploads = []
        self.lock = threading.Lock()
        self.app = Starlette(routes=[Route("/v1/audio/transcriptions", self.transcribe,
                                           methods=["POST"])])

    async def transcribe(self, request):
        form = await request.form()
        upload = form["file"]
        with self.lock:
            self.uploads.append((form["model"], upload.filename, await upload.read()))
        if self.status != 200:
            return JSONResponse({"error": {"message": "bad audio"}}, status_code=self.status)
        return JSONResponse({"text": self.text})


def voice_update(stack, caption=None):
    stack.telegram.add_file("voice-1", b"OggS-fake-audio", "voice/file_1.oga")
    update = stack.telegram.make_update(None, voice={"file_id": "voice-1"})
    if caption:
        update["message"]["caption"] = caption
    return update


def test_a_voice_note_is_transcribed_and_answered(iris_home):
    whisper = FakeWhisper()
    with serve(whisper.app) as server, platform_stack(
        iris_home, IRIS_TRANSCRIPTION_MODEL="openai/whisper-1",
        IRIS_TRANSCRIPTION_API_BASE=f"{server.url}/v1", IRIS_TRANSCRIPTION_API_KEY="sk-t",
    ) as stack:
        assert stack.telegram_post(voice_update(stack)).json()["status"] == "recorded"
        stack.wait(lambda: stack.telegram.sent_messages(4242), timeout=60)
        assert stack.model.seen == ["[voice note] what is on my calendar"]
        assert whisper.uploads == [("whisper-1", "voice.ogg", b"OggS-fake-audio")]
        (reply,) = stack.telegram.sent_messages(4242)
        assert reply["text"] == "re: [voice note] what is on my calendar"
        user = stack.rt.store.users.resolve("telegram:4242")
        session = stack.rt.store.sessions.list(user)[0]
        stored = stack.rt.store.messages.for_session(user, session.id)
        assert stored[0].message.content == "[voice note] what is on my calendar"


def test_a_failed_transcription_is_explained(iris_home):
    whisper = FakeWhisper(status=400)
    with serve(whisper.app) as server, platform_stack(
        iris_home, IRIS_TRANSCRIPTION_MODEL="openai/whisper-1",
        IRIS_TRANSCRIPTION_API_BASE=f"{server.url}/v1", IRIS_TRANSCRIPTION_API_KEY="sk-t",
    ) as stack:
        stack.telegram_post(voice_update(stack))
        stack.wait(lambda: stack.telegram.sent_messages(4242), timeout=60)
        (reply,) = stack.telegram.sent_messages(4242)
        assert reply["text"].startswith("I could not transcribe your voice note.")
        assert stack.model.seen == []
        entry = stack.rt.store.db.one("SELECT status, error FROM inbox")
        assert entry["status"] == "failed" and "transcription" in entry["error"]


def test_without_a_transcription_model_voice_is_off(iris_home):
    with platform_stack(iris_home) as stack:
        stack.telegram_post(voice_update(stack, caption="listen"))
        stack.wait(lambda: stack.telegram.sent_messages(4242))
        (reply,) = stack.telegram.sent_messages(4242)
        assert "Voice messages are off" in reply["text"]
        assert "IRIS_TRANSCRIPTION_MODEL" in reply["text"]
        assert stack.model.seen == []
        assert stack.telegram.methods_called().count("getFile") == 0
