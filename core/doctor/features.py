"""``iris doctor``'s checks of the optional model features a user meets in chat: whether images
can be seen (the main model, or ``vision_analyze`` with ``IRIS_VISION_MODEL``), spoken replies
(``IRIS_TTS_MODEL``), and where ``execute_code`` runs with which limits. Nothing here calls a
model or the network: vision comes from ``IRIS_MODEL_VISION`` or litellm's bundled model info."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.doctor.browser import check_browser

if TYPE_CHECKING:
    from core.config import Settings
    from core.doctor.report import Report

VISION_FIX = ("set IRIS_VISION_MODEL to a model that sees (e.g. openai/gpt-4o-mini), or "
              "IRIS_MODEL_VISION=true if the model does see images")


def check(report: Report, settings: Settings) -> None:
    _check_vision(report, settings)
    _check_speech(report, settings)
    _check_execute_code(report, settings)
    check_browser(report, settings)


def _main_model_sees(settings: Settings) -> tuple[bool, str]:
    """(sees, " (why)") for the deployment's main model, as a turn decides it
    (core.intake.vision)."""
    if settings.model_vision is not None:
        return settings.model_vision, \
            f" (IRIS_MODEL_VISION={str(settings.model_vision).lower()})"
    if not settings.model:
        return False, ""
    from core.model.routing import sees_images

    sees, source = sees_images(settings, settings.model)
    return sees, f" ({source})"


def _check_vision(report: Report, settings: Settings) -> None:
    model = settings.model or "the embedded demo model"
    sees, why = _main_model_sees(settings)
    if sees:
        extra = (f"; vision_analyze asks {settings.vision_model} about earlier images"
                 if settings.vision_model else "")
        report.add("ok", "vision", f"{model} sees images{why}{extra}")
    elif settings.vision_model:
        report.add("ok", "vision", f"{model} cannot see images{why}; vision_analyze asks "
                   f"{settings.vision_model} (IRIS_VISION_MODEL), its tokens and cost counted "
                   "in /usage")
    else:
        report.add("ok", "vision", f"off: {model} cannot see images{why} and "
                   f"IRIS_VISION_MODEL is not set, so images are answered with \"cannot see\"; "
                   f"to enable it, {VISION_FIX}")


def _check_speech(report: Report, settings: Settings) -> None:
    default = "on" if settings.voice_replies else "off"
    if settings.tts_model:
        report.add("ok", "voice replies", f"{settings.tts_model} (voice {settings.tts_voice}) "
                   f"speaks answers to Telegram voice notes; {default} by default "
                   "(IRIS_VOICE_REPLIES), each person's /voice overrides")
    elif settings.voice_replies:
        report.add("warning", "voice replies", "IRIS_VOICE_REPLIES is on but IRIS_TTS_MODEL "
                   "is not set: nobody gets voice replies",
                   "set IRIS_TTS_MODEL (e.g. openai/tts-1), or unset IRIS_VOICE_REPLIES")
    else:
        report.add("ok", "voice replies", "off (IRIS_TTS_MODEL is not set); to enable it, set "
                   "IRIS_TTS_MODEL (e.g. openai/tts-1), and IRIS_VOICE_REPLIES=true to make "
                   "it the default")


def _check_execute_code(report: Report, settings: Settings) -> None:
    limits = (f"limits {settings.execute_code_timeout:g} s, "
              f"{settings.execute_code_max_calls} tool calls, "
              f"{settings.execute_code_output_chars:,} printed chars per script "
              "(IRIS_EXECUTE_CODE_TIMEOUT / _MAX_CALLS / _OUTPUT_CHARS)")
    backend = settings.sandbox_backend
    if backend != "local":
        report.add("ok", "execute_code", f"runs in the {backend} sandbox; {limits}")
        return
    from core.acting.isolation import FIX, local_isolation
    from core.errors import ConfigError

    try:  # the rule the local backend itself applies
        isolated = local_isolation(settings, None) == "bwrap"
    except ConfigError:  # bubblewrap wanted or needed but missing: the sandbox line says why
        isolated = False
    if isolated:
        report.add("ok", "execute_code", f"runs in the local sandbox under bubblewrap; {limits}")
    else:
        why = ("sandbox_isolation: none" if settings.sandbox_isolation == "none"
               else "bubblewrap is not installed")
        report.add("warning", "execute_code", f"runs in the local sandbox NOT isolated ({why}): "
                   f"a script can read everything this account can; {limits}", FIX)
