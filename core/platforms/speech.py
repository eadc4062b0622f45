"""Spoken replies: a person who speaks to Iris (a voice note on Telegram) hears the answer too.

After the turn's text reply is committed and sent, the ``speak_after_turn`` hook turns the
reply into speech with litellm's speech API (``Settings.tts_model``, asking for OGG/Opus) and
records it as a second delivery of its own (source ``voice:inbox:<id>``, unique), its audio in
the user's object store. The delivery machinery sends it once (``VoiceSender.send_voice``):
a retried send or a re-run hook never doubles the voice note, and a failed speech call loses
nothing but the voice note; the text has gone already. ``/voice on|off|default`` sets it per
person; ``IRIS_VOICE_REPLIES`` is the deployment's default.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from core.errors import NotFound
from core.platforms.voice import audio_call, has_voice

if TYPE_CHECKING:
    from core.config import Settings
    from core.hooks import HookContext
    from core.store import Store

log = logging.getLogger("iris.speech")

MAX_SPOKEN_CHARS = 4_000  # OpenAI's speech input limit is 4,096 characters
SPOKEN_PLATFORMS = frozenset({"telegram"})


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


async def synthesize(settings: Settings, text: str) -> bytes:
    """Text → audio through litellm (OGG/Opus asked for); provider failures raise
    ProviderError."""
    response = await audio_call(settings, "aspeech", "tts", model=settings.tts_model,
                                input=text, voice=settings.tts_voice, response_format="opus")
    return bytes(response.content)


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
    try:
        audio = await synthesize(ctx.settings, spoken_text(outcome.reply))
    except Exception as exc:
        log.warning("no voice reply for inbox %s: %s", entry.id, exc)
        return
    if not audio:
        return
    ogg = audio.startswith(b"OggS")
    filename = "reply.ogg" if ogg else "reply.mp3"
    key = f"voice-replies/{entry.id}.{filename.rsplit('.', 1)[1]}"
    await asyncio.to_thread(ctx.store.objects.put, entry.user_id, key, audio)
    from core.platforms.delivery import DeliveryService
    from core.platforms.registry import PLATFORMS

    target = {**PLATFORMS[message.platform].reply_address(message), "quote": False,
              "voice": {"key": key, "filename": filename}}
    delivery_id = ctx.store.deliveries.add(
        entry.user_id, source=source, platform=message.platform, chat_key=entry.chat_key,
        target=target, text=outcome.reply,
    )
    if delivery_id is not None:
        await DeliveryService(ctx.store, ctx.services.senders).attempt(entry.user_id,
                                                                       delivery_id)
