"""``PUT /_matrix/app/v1/transactions/{txnId}``: events a Matrix homeserver pushes to Iris as
an application service (Application Service API, "Pushing events").

The homeserver authenticates with the registration's ``hs_token``: ``Authorization: Bearer``
(or the legacy ``access_token`` query parameter), checked before the body is read; a missing
token is 401 ``M_UNAUTHORIZED``, a wrong one 403 ``M_FORBIDDEN``. The homeserver re-sends a
transaction until it gets a 200, with the same ``txnId`` and the same events: each event id is
the inbox key, so a transaction sent again records nothing new. ``m.room.message`` events of
type ``m.text`` (and ``m.notice`` is skipped, as bots' output) from anyone but Iris' own user
are recorded and their room dispatched; an invitation of Iris' user to a room is accepted
(``join``) after the ack. The answer is ``{}``.
"""

from __future__ import annotations

import hmac
from typing import Any

from fastapi import APIRouter, BackgroundTasks, Request
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.messages import InboundMessage
from functions.auth import ApiError
from functions.runtime import Runtime
from functions.webhooks import accept, read_body

MAX_PAYLOAD_BYTES = 2 * 1024 * 1024
ID = r"^[!$@#A-Za-z0-9._=/+:-]{1,255}$"


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


class MxEvent(_Model):
    type: str = Field(max_length=255)
    event_id: str | None = Field(default=None, pattern=ID)
    room_id: str | None = Field(default=None, pattern=ID)
    sender: str | None = Field(default=None, pattern=ID)
    state_key: str | None = None
    content: dict[str, Any] = Field(default_factory=dict)


class MxTransaction(_Model):
    events: list[MxEvent] = Field(default_factory=list, max_length=1000)


def configured(rt: Runtime) -> tuple[str, str]:
    """The hs_token and Iris' user id, or 404/503 naming what is missing."""
    settings = rt.settings
    values = (
        ("IRIS_MATRIX_HS_TOKEN", settings.secret("matrix_hs_token")),
        ("IRIS_MATRIX_AS_TOKEN", settings.secret("matrix_as_token")),
        ("IRIS_MATRIX_HOMESERVER_URL", settings.matrix_homeserver_url),
        ("IRIS_MATRIX_USER_ID", settings.matrix_user_id),
    )
    if not any(value for _, value in values):
        raise ApiError(404, "Matrix is not configured on this Iris", code="M_NOT_FOUND")
    missing = [name for name, value in values if not value]
    if missing:
        raise ApiError(
            503,
            f"Matrix is half configured: {', '.join(missing)} not set",
            code="matrix_not_configured",
        )
    return str(values[0][1]), str(values[3][1])


def authenticate(request: Request, hs_token: str) -> None:
    header = request.headers.get("authorization", "")
    given = header[7:].strip() if header.lower().startswith("bearer ") else ""
    given = given or request.query_params.get("access_token", "")
    if not given:
        raise ApiError(401, "no hs_token", code="M_UNAUTHORIZED", kind="authentication_error")
    if not hmac.compare_digest(given.encode(), hs_token.encode()):
        raise ApiError(403, "wrong hs_token", code="M_FORBIDDEN", kind="authentication_error")


def to_message(event: MxEvent, bot: str) -> InboundMessage | None:
    if event.type != "m.room.message" or event.sender in (None, bot):
        return None
    body = event.content.get("body")
    if event.content.get("msgtype") != "m.text" or not isinstance(body, str) or not body.strip():
        return None
    if event.event_id is None or event.room_id is None or event.sender is None:
        return None
    return InboundMessage(
        platform="matrix",
        chat_id=event.room_id,
        account=f"matrix:{event.sender}",
        platform_message_id=event.event_id,
        text=body[:100_000],
    )


def build_router(rt: Runtime) -> APIRouter:
    router = APIRouter()

    @router.put("/_matrix/app/v1/transactions/{txn_id}")
    async def matrix_transaction(
        txn_id: str, request: Request, background: BackgroundTasks
    ) -> dict[str, object]:
        hs_token, bot = configured(rt)
        authenticate(request, hs_token)
        body = await read_body(request, MAX_PAYLOAD_BYTES)
        try:
            transaction = MxTransaction.model_validate_json(body)
        except ValidationError:
            raise ApiError(400, "not a Matrix transaction", code="M_BAD_JSON") from None
        sender = rt.senders.get("matrix")
        for event in transaction.events:
            if (
                event.type == "m.room.member"
                and event.state_key == bot
                and event.room_id
                and event.content.get("membership") == "invite"
                and sender is not None
            ):
                background.add_task(_join, sender, event.room_id)
                continue
            message = to_message(event, bot)
            if message is not None:
                await accept(rt, message, background)
        return {}

    return router


async def _join(sender: Any, room_id: str) -> None:
    import logging

    try:
        await sender.join(room_id)
    except Exception as exc:
        logging.getLogger("iris.matrix").warning("could not join %s: %s", room_id, exc)
