"""Voice notes: download the audio through the platform's sender and transcribe it with litellm
(``Settings.transcription_model``, e.g. ``openai/whisper-1``). Without a transcription model the
user gets a clear answer that voice is off, and no model call is made. Every transcription the
provider answers is counted at once as the user's usage (kind ``transcription``, priced by
litellm: whisper-1 per second of audio); a call the provider refused is not."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.errors import ProviderError
from core.lanes import blocking
from core.messages import Usage

if TYPE_CHECKING:
    from core.config import Settings
    from core.contracts.senders import Sender
    from core.messages import Attachment, InboundMessage

log = logging.getLogger("iris.voice")

VOICE_KINDS = frozenset({"voice", "audio"})
MAX_AUDIO_BYTES = 20 * 1024 * 1024  # the Bot API's download limit
VOICE_OFF = (
    "Voice messages are off on this Iris: its owner can turn them on by setting "
    "IRIS_TRANSCRIPTION_MODEL (e.g. openai/whisper-1). Please send your message as text."
)


@dataclass(frozen=True)
class Heard:
    text: str = ""
    reply: str | None = None  # set when the turn ends here with this answer
    status: str = "done"
    error: str | None = None


def has_voice(message: InboundMessage) -> bool:
    return any(a.kind in VOICE_KINDS for a in message.attachments)


async def audio_call(settings: Settings, method: str, prefix: str, **kwargs: Any) -> Any:
    """``litellm.<method>(**kwargs)`` with the ``<prefix>_api_base`` / ``<prefix>_api_key``
    settings and the model timeout (unless ``timeout`` is given); provider failures raise
    ProviderError."""
    from core.model.llm import classify_error, load_litellm

    litellm = await blocking("io", "import:litellm", load_litellm, what="loading litellm")
    kwargs.setdefault("timeout", settings.model_timeout)
    if base := getattr(settings, f"{prefix}_api_base"):
        kwargs["api_base"] = base
    if key := settings.secret(f"{prefix}_api_key"):
        kwargs["api_key"] = key
    try:
        return await getattr(litellm, method)(**kwargs)
    except Exception as exc:
        raise classify_error(exc) from exc


def response_cost(response: Any) -> float | None:
    """The cost litellm put on an audio response (``_hidden_params["response_cost"]``), or None
    when litellm does not price the model."""
    hidden = getattr(response, "_hidden_params", None) or {}
    cost = hidden.get("response_cost")
    return float(cost) if isinstance(cost, int | float) else None


async def transcribe_audio(settings: Settings, audio: bytes, filename: str) -> tuple[str, Usage]:
    """Audio → (text, the call's usage) through litellm; provider failures raise
    ProviderError. Attempts the provider answered with an error (retried by the OpenAI client)
    carry no usage and are not charged; the answered call is."""
    model = settings.transcription_model or ""
    response = await audio_call(settings, "atranscription", "transcription",
                                model=model, file=(filename, audio))
    billed = getattr(response, "usage", None)  # token counts, for the models billed by token
    usage = Usage(model=model, cost_usd=response_cost(response), kind="transcription",
                  prompt_tokens=int(getattr(billed, "input_tokens", 0) or 0),
                  completion_tokens=int(getattr(billed, "output_tokens", 0) or 0))
    return str(getattr(response, "text", "") or "").strip(), usage


def _filename(attachment: Attachment) -> str:
    if attachment.name:
        return attachment.name
    mime = attachment.mime_type or "audio/ogg"
    extension = {"audio/ogg": "ogg", "audio/mpeg": "mp3", "audio/mp4": "m4a",
                 "audio/wav": "wav", "audio/x-wav": "wav", "audio/webm": "webm"}.get(mime, "ogg")
    return f"voice.{extension}"


async def transcribe_voice(
    settings: Settings, senders: Mapping[str, Sender], message: InboundMessage,
    charge: Callable[[Usage], None],
) -> Heard:
    """The message's text with its voice notes transcribed, or the answer that ends the turn.
    ``charge`` records each answered transcription's usage as soon as it is made, so a later
    failure of the turn does not lose a call that was paid for."""
    if not settings.transcription_model:
        return Heard(reply=VOICE_OFF)
    sender = senders.get(message.platform)
    download = getattr(sender, "download", None)
    if download is None:
        return Heard(reply=f"I cannot fetch voice notes from {message.platform}.",
                     status="failed", error="voice: no downloader for the platform")
    heard: list[str] = []
    for attachment in message.attachments:
        if attachment.kind not in VOICE_KINDS:
            continue
        try:
            audio = await download(attachment.ref)
            if len(audio) > MAX_AUDIO_BYTES:
                return Heard(reply="That voice note is too long for me to transcribe.",
                             status="failed", error="voice: audio over 20 MB")
            text, usage = await transcribe_audio(settings, audio, _filename(attachment))
            charge(usage)
            heard.append(text)
        except ProviderError as exc:
            log.warning("transcription failed: %s: %s", exc.kind, exc)
            return Heard(reply=f"I could not transcribe your voice note. {exc.user_message()}",
                         status="failed", error=f"{exc.kind}: transcription: {exc}")
        except Exception as exc:
            log.warning("voice note download failed: %s", exc)
            return Heard(reply="I could not download your voice note. Please try again.",
                         status="failed", error=f"voice: download failed: {exc}")
    transcript = "\n".join(t for t in heard if t)
    if not transcript:
        return Heard(reply="I could not make out any words in that voice note.")
    spoken = f"[voice note] {transcript}"
    return Heard(text=f"{message.text}\n\n{spoken}" if message.text.strip() else spoken)
