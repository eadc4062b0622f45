"""Spoken replies: a person who speaks to Iris (a voice note on Telegram) hears the answer too.

After the turn's text reply is committed and sent, the ``speak_after_turn`` hook records a
second delivery of its own (source ``voice:inbox:<id>``, unique) that carries the reply's text.
Sending it (``voice_audio``) first turns the text into speech with litellm's speech API
(``Settings.tts_model``, asking for OGG/Opus) and keeps the audio in the user's object store;
then ``VoiceSender.send_voice`` sends it. So a failing speech call is retried like a failing
send, by the delivery machinery's claim and backoff, at most ``SPEECH_ATTEMPTS`` times; once
the audio is stored a retried send reuses it (no second paid call), and the unique source
means a re-run hook never doubles the voice note. The text has gone already whatever happens.
Each speech call that litellm prices is counted as the user's usage (under the speech model).
``/voice on|off|default`` sets it per person; ``IRIS_VOICE_REPLIES`` is the deployment's
default.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from core.errors import NotFound, ProviderError
from core.messages import Usage
from core.platforms.voice import audio_call, has_voice

if TYPE_CHECKING:
    from core.config import Settings
    from core.hooks import HookContext
    from core.store import Store
    from core.store.deliveries import Delivery

log = logging.getLogger("iris.speech")

MAX_SPOKEN_CHARS = 4_000  # OpenAI's speech input limit is 4,096 characters
SPOKEN_PLATFORMS = frozenset({"telegram"})
SPEECH_ATTEMPTS = 3  # speech calls per voice note (backoff between them: the delivery's)


def wants_voice(store: Store, settings: Settings, user_id: str, account: str) -> bool:
    """The person's /voice choice, else the deployment's default. A group's scope has no
    choice of its own: the speaker's counts."""
    try:
        person = store.users.get(store.users.resolve(account))
    except NotFound:
        person = store.users.get(user_id)
    return settings.voice_replies if person.voice_replies is None else person.voice_replies


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
                                max_retries=0)
    hidden = getattr(response, "_hidden_params", None) or {}
    cost = hidden.get("response_cost")
    return bytes(response.content), float(cost) if isinstance(cost, int | float) else None


def filename_of(audio: bytes) -> str:
    return "reply.ogg" if audio.startswith(b"OggS") else "reply.mp3"


async def speak_after_turn(ctx: HookContext) -> None:
    entry, outcome = ctx.entry, ctx.outcome
    message = entry.message
    if (message.platform not in SPOKEN_PLATFORMS or not has_voice(message)
            or outcome.status != "done" or not outcome.reply.strip() or outcome.command
            or not ctx.settings.tts_model):
        return
    if not wants_voice(ctx.store, ctx.settings, entry.user_id, message.account):
        return
    source = f"voice:inbox:{entry.id}"
    if ctx.store.deliveries.for_source(entry.user_id, source) is not None:
        return  # spoken already (or being spoken)
    from core.platforms.delivery import DeliveryService
    from core.platforms.registry import PLATFORMS

    voice = {"key": f"voice-replies/{entry.id}", "inbox_id": entry.id,
             "session_id": entry.session_id}
    target = {**PLATFORMS[message.platform].reply_address(message), "quote": False,
              "voice": voice}
    delivery_id = ctx.store.deliveries.add(
        entry.user_id, source=source, platform=message.platform, chat_key=entry.chat_key,
        target=target, text=outcome.reply,
    )
    if delivery_id is not None:
        await DeliveryService(ctx.store, ctx.services.senders, ctx.settings).attempt(
            entry.user_id, delivery_id)


async def voice_audio(store: Store, settings: Settings | None,
                      delivery: Delivery) -> tuple[bytes, str]:
    """The voice note's (audio, filename): the stored audio, else the reply spoken now and
    stored. A failed speech call raises DeliveryFailed, retryable while attempts remain."""
    from core.platforms.delivery import DeliveryFailed
    from core.store.objects import ObjectNotFound

    voice = delivery.target["voice"]
    try:
        stored = await asyncio.to_thread(store.objects.get, delivery.user_id, voice["key"])
        return stored.data, voice.get("filename") or filename_of(stored.data)
    except ObjectNotFound:
        if voice.get("filename"):  # recorded with its audio, which is gone
            raise DeliveryFailed("the voice note's audio is gone", retryable=False) from None
    if settings is None or not settings.tts_model:
        raise DeliveryFailed("no speech model (IRIS_TTS_MODEL) to speak the reply",
                             retryable=False)
    try:
        audio, cost = await synthesize(settings, spoken_text(delivery.text))
    except Exception as exc:
        retryable = not isinstance(exc, ProviderError) or exc.retryable
        raise DeliveryFailed(f"speech: {exc}", retryable=retryable
                             and delivery.attempts < SPEECH_ATTEMPTS) from exc
    if not audio:
        raise DeliveryFailed("speech: the model returned no audio", retryable=False)
    store.usage.record(delivery.user_id, Usage(model=settings.tts_model, cost_usd=cost),
                       session_id=voice.get("session_id"), inbox_id=voice.get("inbox_id"))
    await asyncio.to_thread(store.objects.put, delivery.user_id, voice["key"], audio)
    return audio, filename_of(audio)
