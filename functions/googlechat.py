"""``POST /googlechat/events``: the HTTP endpoint of a Google Chat app.

Before the body is read, the ``Authorization: Bearer`` JWT Google Chat sends is verified
(``core.platforms.jwt_verify``), as Google's "Verify requests from Google Chat" describes for
the app's authentication audience (``IRIS_GOOGLECHAT_AUDIENCE``):

- the project number: a token issued by ``chat@system.gserviceaccount.com`` for that number,
  signed by one of that service account's keys (its JWKS at googleapis.com);
- the app's URL: a Google ID token (issuer ``https://accounts.google.com``) for that URL whose
  ``email`` is ``chat@system.gserviceaccount.com`` (verified), signed by Google's OAuth keys.

RS256 only; expiry and not-before on the injected clock with a minute's leeway. Anything else
is 401 and nothing is stored. A ``MESSAGE`` is recorded once (its message name) and its chat
dispatched; Chat gets an empty response at once (no synchronous message) and the answer is
created in the space through the Chat API from the worker. A ``CARD_CLICKED`` on one of Iris'
buttons is recorded as the answer to its question.
"""

from __future__ import annotations

from fastapi import APIRouter, BackgroundTasks, Request
from fastapi.responses import JSONResponse

from core.platforms.googlechat_inbound import CARD_CLICKED, Event, parse_click, parse_event
from core.platforms.jwt_verify import KeySet, TokenRejected, bearer, verify
from functions.auth import ApiError
from functions.bodies import parse_json
from functions.runtime import Runtime
from functions.webhooks import accept, accept_press, read_body

MAX_EVENT_BYTES = 1024 * 1024
CHAT_ISSUER = "chat@system.gserviceaccount.com"
CHAT_KEYS = "https://www.googleapis.com/service_accounts/v1/jwk/" + CHAT_ISSUER
GOOGLE_ISSUERS = ("https://accounts.google.com", "accounts.google.com")
GOOGLE_KEYS = "https://www.googleapis.com/oauth2/v3/certs"
LEEWAY = 60.0


def refused(reason: str) -> ApiError:
    return ApiError(401, f"Google Chat token refused: {reason}", code="bad_token",
                    kind="authentication_error")


def by_url(audience: str) -> bool:
    return audience.startswith("https://")


def keys_url(audience: str, configured: str | None) -> str:
    return configured or (GOOGLE_KEYS if by_url(audience) else CHAT_KEYS)


async def check_token(request: Request, keys: KeySet, audience: str) -> None:
    try:
        token = bearer(request.headers.get("authorization"))
        issuers = GOOGLE_ISSUERS if by_url(audience) else (CHAT_ISSUER,)
        verified = await verify(token, keys, issuers=issuers, audiences=(audience,),
                                leeway=LEEWAY)
    except TokenRejected as exc:
        raise refused(str(exc)) from None
    if by_url(audience):
        claims = verified.claims
        if claims.get("email") != CHAT_ISSUER or claims.get("email_verified") is not True:
            raise refused("the ID token is not Google Chat's")


def parse_body(body: bytes) -> Event:
    return parse_json(Event, body, "a Google Chat event", "bad_event")


def build_router(rt: Runtime) -> APIRouter:
    router = APIRouter()
    audience = rt.settings.googlechat_audience or ""
    keys = KeySet(clock=rt.store.clock,
                  jwks_url=keys_url(audience, rt.settings.googlechat_certs_url))

    @router.post("/googlechat/events")
    async def googlechat_events(request: Request, background: BackgroundTasks) -> JSONResponse:
        if not audience:
            raise ApiError(404, "Google Chat is not configured on this Iris: set "
                           "IRIS_GOOGLECHAT_AUDIENCE", code="googlechat_disabled")
        await check_token(request, keys, audience)
        event = parse_body(await read_body(request, MAX_EVENT_BYTES))
        if event.type == CARD_CLICKED:
            pressed = parse_click(event)
            if pressed.message is not None:
                await accept_press(rt, pressed.message, background, group_ref=pressed.group_ref)
            return JSONResponse({})
        parsed = parse_event(event)
        if parsed.message is not None:
            await accept(rt, parsed.message, background, group_ref=parsed.group_ref,
                         group_title=parsed.group_title, instead=parsed.reply)
        return JSONResponse({})

    return router
