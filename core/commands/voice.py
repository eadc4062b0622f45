"""``/voice``: whether Iris answers your voice notes with a voice note too (Telegram)."""

from __future__ import annotations

from core.commands import CommandContext, CommandResult, command
from core.errors import NotFound
from core.platforms.speech import wants_voice

USAGE = "Usage: /voice | /voice on | /voice off | /voice default"


@command("voice", "spoken replies to your voice notes: /voice on|off|default")
def voice(ctx: CommandContext, args: str) -> CommandResult:
    verb = args.strip().lower()
    try:
        person = ctx.store.users.resolve(ctx.account)
    except NotFound:
        person = ctx.user_id
    if verb in ("on", "off", "default"):
        ctx.store.users.set_voice_replies(person, None if verb == "default" else verb == "on")
    elif verb:
        return CommandResult(reply=USAGE)
    on = wants_voice(ctx.store, ctx.settings, ctx.user_id, ctx.account)
    state = "on: I answer your voice notes with a voice note too" if on else "off"
    if on and not ctx.settings.tts_model:
        state += " (but this Iris has no speech model: its owner can set IRIS_TTS_MODEL)"
    return CommandResult(reply=f"Voice replies are {state}. {USAGE}")
