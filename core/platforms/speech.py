"""Spoken replies: a person who speaks to Iris (a voice note on Telegram) hears the answer too.

After the turn's text reply is committed and sent, the ``speak_after_turn`` hook records a
second delivery of its own (source ``voice:inbox:<id>``, unique) that carries the reply's text.
Sending it (``core.platforms.tts.voice_audio``) first turns the text into speech with litellm's
speech API (``Settings.tts_model``, asking for OGG/Opus) and keeps the audio in the user's
object store; then ``VoiceSender.send_voice`` sends it. So a failing speech call is retried
like a failing send, by the delivery machinery's claim and backoff, at most
``tts.SPEECH_ATTEMPTS`` times; once the audio is stored a retried send reuses it (no second
paid call), and the unique source means a re-run hook never doubles the voice note. The text
has gone already whatever happens. Each speech call that litellm prices is counted as the
user's usage (under the speech model). ``/voice on|off|default`` sets it per person;
``IRIS_VOICE_REPLIES`` is the deployment's default.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from core.errors import NotFound
from core.platforms.voice import has_voice

if TYPE_CHECKING:
    from core.config import Settings
    from core.contracts.hooks import HookContext
    from core.store import Store

log = logging.getLogger("iris.speech")

SPOKEN_PLATFORMS = frozenset({"telegram"})


def wants_voice(store: Store, settings: Settings, user_id: str, account: str) -> bool:
    """The person's /voice choice, else the deployment's default. A group's scope has no
    choice of its own: the speaker's counts."""
    try:
        person = store.users.get(store.users.resolve(account))
    except NotFound:
        person = store.users.get(user_id)
    return settings.voice_replies if person.voice_replies is None else person.voice_replies


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
