"""Speech for spoken replies (``core.platforms.speech``): the reply's text made into audio with
litellm's speech API when its voice delivery is sent, kept in the user's object store once made,
and the priced call counted as the user's usage. The delivery service (``core.platforms.delivery``)
calls ``voice_audio`` and turns ``SpeechFailed`` into its own retry with backoff."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.errors import ProviderError
from core.lanes import blocking
from core.messages import Usage
from core.platforms.voice import audio_call, response_cost

if TYPE_CHECKING:
    from core.config import Settings
    from core.store import Store
    from core.store.deliveries import Delivery

MAX_SPOKEN_CHARS = 4_000  # OpenAI's speech input limit is 4,096 characters
SPEECH_ATTEMPTS = 3  # speech calls per voice note (backoff between them: the delivery's)
# A speech call ends well within the delivery's claim (CLAIM_SECONDS, 120 s), so no sweep can
# take the delivery over while it is still being spoken and sent (a second voice note).
SPEECH_TIMEOUT = 60.0


class SpeechFailed(Exception):
    def __init__(self, message: str, *, retryable: bool):
        super().__init__(message)
        self.retryable = retryable


def spoken_text(reply: str) -> str:
    """The reply as it should be read aloud: no Markdown marks, within the input limit."""
    text = reply
    for mark in ("**", "__", "`", "#"):
        text = text.replace(mark, "")
    text = " ".join(text.split())
    return text if len(text) <= MAX_SPOKEN_CHARS else text[: MAX_SPOKEN_CHARS - 1] + "…"


async def synthesize(settings: Settings, text: str) -> tuple[bytes, float | None]:
    """Text → (audio, cost in USD when litellm prices the model) through litellm (OGG/Opus
    asked for); provider failures raise ProviderError. One request: the delivery retries
    (the OpenAI client's own two retries are off)."""
    response = await audio_call(settings, "aspeech", "tts", model=settings.tts_model,
                                input=text, voice=settings.tts_voice, response_format="opus",
                                max_retries=0,
                                timeout=min(settings.model_timeout, SPEECH_TIMEOUT))
    return bytes(response.content), response_cost(response)


def filename_of(audio: bytes) -> str:
    return "reply.ogg" if audio.startswith(b"OggS") else "reply.mp3"


async def voice_audio(store: Store, settings: Settings | None,
                      delivery: Delivery) -> tuple[bytes, str]:
    """The voice note's (audio, filename): the stored audio, else the reply spoken now and
    stored. A failed speech call raises SpeechFailed, retryable while attempts remain."""
    from core.store.objects import ObjectNotFound

    voice = delivery.target["voice"]
    try:
        stored = await blocking("io", delivery.user_id, store.objects.get, delivery.user_id,
                                voice["key"], what="reading the voice note")
        return stored.data, voice.get("filename") or filename_of(stored.data)
    except ObjectNotFound:
        if voice.get("filename"):  # recorded with its audio, which is gone
            raise SpeechFailed("the voice note's audio is gone", retryable=False) from None
    if settings is None or not settings.tts_model:
        raise SpeechFailed("no speech model (IRIS_TTS_MODEL) to speak the reply",
                           retryable=False)
    try:
        audio, cost = await synthesize(settings, spoken_text(delivery.text))
    except Exception as exc:
        retryable = not isinstance(exc, ProviderError) or exc.retryable
        raise SpeechFailed(f"speech: {exc}",
                           retryable=retryable and delivery.attempts < SPEECH_ATTEMPTS) from exc
    if not audio:
        raise SpeechFailed("speech: the model returned no audio", retryable=False)
    spoken = Usage(model=settings.tts_model, cost_usd=cost, kind="speech")
    store.usage.record(delivery.user_id, spoken,
                       session_id=voice.get("session_id"), inbox_id=voice.get("inbox_id"))
    await blocking("io", delivery.user_id, store.objects.put, delivery.user_id, voice["key"],
                   audio, what="storing the voice note")
    return audio, filename_of(audio)
