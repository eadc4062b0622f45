"""``POST /discord/interactions``: Discord's interactions endpoint.

The Ed25519 signature (``X-Signature-Ed25519`` over ``X-Signature-Timestamp`` + the raw body,
with the application's public key) is checked before anything is read; requests more than five
minutes from the runtime's clock are refused as replays. PING is answered with PONG. A command
is recorded once (the interaction id) and its chat dispatched, and Discord gets a deferred
response at once (type 5, "Iris is thinking…"); the answer edits it from the worker. A press
of a ``clarify`` button (type 3) is answered at once too: the question's message updated
(type 7) when the press counts, a note only the presser sees when it does not.
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, BackgroundTasks, Request
from fastapi.responses import JSONResponse

from core.asking.clarify import PRESS_REFUSED
from core.platforms.discord_buttons import UPDATE_MESSAGE, answered_components, parse_press
from core.platforms.discord_inbound import (
    MESSAGE_COMPONENT,
    PING,
    Interaction,
    parse_interaction,
)
from functions.auth import ApiError
from functions.bodies import parse_json
from functions.runtime import Runtime
from functions.webhooks import accept, accept_press, read_body

MAX_INTERACTION_BYTES = 1024 * 1024
MAX_SIGNATURE_AGE = 300
PONG = {"type": 1}
DEFERRED = {"type": 5}
EPHEMERAL = 64


def verify_signature(public_key: str, body: bytes, request: Request, *, now: float) -> None:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    signature = request.headers.get("x-signature-ed25519", "")
    timestamp = request.headers.get("x-signature-timestamp", "")
    if not re.fullmatch(r"[0-9a-fA-F]{128}", signature) or not re.fullmatch(r"\d{1,12}",
                                                                              timestamp):
        raise ApiError(401, "missing or malformed Discord signature headers",
                       code="bad_signature", kind="authentication_error")
    try:
        key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key))
        key.verify(bytes.fromhex(signature), timestamp.encode() + body)
    except (InvalidSignature, ValueError):
        raise ApiError(401, "invalid request signature", code="bad_signature",
                       kind="authentication_error") from None
    if abs(now - int(timestamp)) > MAX_SIGNATURE_AGE:
        raise ApiError(401, "stale Discord request timestamp", code="bad_signature",
                       kind="authentication_error")


def parse_body(body: bytes) -> Interaction:
    return parse_json(Interaction, body, "a Discord interaction", "bad_interaction")


def ephemeral(text: str) -> dict[str, Any]:
    return {"type": 4, "data": {"content": text, "flags": EPHEMERAL,
                                "allowed_mentions": {"parse": []}}}


async def press(rt: Runtime, interaction: Interaction,
                background: BackgroundTasks) -> dict[str, Any]:
    """A button press on a ``clarify`` question: when it counts, recorded as the answer and
    acknowledged by updating the question's message (its buttons disabled, the choice marked);
    otherwise a short note only the presser sees, and nothing changes."""
    parsed = parse_press(interaction)
    if parsed.message is None:
        return ephemeral("That button is not one of mine.")
    outcome = await accept_press(rt, parsed.message, background, group_ref=parsed.group_ref)
    pressed = parsed.message.press
    if pressed is None:  # parse_press sets it on every message it returns
        return ephemeral("That button is not one of mine.")
    question = None
    if outcome.status == "recorded" and outcome.user_id is not None:
        question = rt.store.clarifications.get(outcome.user_id, pressed.question_id)
    if question is None:
        return ephemeral(PRESS_REFUSED)
    return {"type": UPDATE_MESSAGE, "data": {"components": answered_components(
        question.id, question.choices, pressed.choice)}}


def build_router(rt: Runtime) -> APIRouter:
    router = APIRouter()

    @router.post("/discord/interactions")
    async def discord_interactions(request: Request, background: BackgroundTasks) -> JSONResponse:
        public_key = rt.settings.discord_public_key
        if not public_key:
            raise ApiError(404, "Discord is not configured on this Iris: set "
                           "IRIS_DISCORD_PUBLIC_KEY", code="discord_disabled")
        body = await read_body(request, MAX_INTERACTION_BYTES)
        verify_signature(public_key, body, request, now=rt.store.clock.now())
        interaction = parse_body(body)
        if interaction.type == PING:
            return JSONResponse(PONG)
        if interaction.type == MESSAGE_COMPONENT:
            return JSONResponse(await press(rt, interaction, background))
        parsed = parse_interaction(interaction)
        if parsed.message is None:
            return JSONResponse(ephemeral("Iris answers slash commands only: try /ask."))
        outcome = await accept(rt, parsed.message, background, group_ref=parsed.group_ref,
                               instead=parsed.reply)
        if outcome.status == "denied" and parsed.message.is_group:
            return JSONResponse(ephemeral(
                "I don't know you yet: send me a direct message (/ask) to get a pairing code."))
        return JSONResponse(DEFERRED)

    return router
