"""``PUT /_matrix/app/v1/transactions/{txnId}``: events a Matrix homeserver pushes to Iris as
an application service (Application Service API, "Pushing events").

The homeserver authenticates with the registration's ``hs_token``: ``Authorization: Bearer``
(or the legacy ``access_token`` query parameter), checked before the body is read; a missing
token is 401 ``M_UNAUTHORIZED``, a wrong one 403 ``M_FORBIDDEN``. The homeserver re-sends a
transaction until it gets a 200, with the same ``txnId`` and the same events: each event id is
the inbox key, so a transaction sent again records nothing new. Room messages are read as
``core.platforms.matrix_inbound`` says (text, images and files; Iris' own events and notices
are not). An invitation of Iris' user to a room is accepted (``join``) after the ack.

A room with more than two members is a group: its data belongs to the room's own scope (a
group user, ``matrix:group:<room id>``) and only messages addressed to Iris are read. The
transaction says nothing of a room's size, so it is learnt after the ack, off the ack path:
when Iris joins a room and whenever someone joins it (``m.room.member``), the
room's joined members are counted (``joined_members``) and a room of more than two gets its
group scope; a room with a group scope is a group from then on. The answer is ``{}``.
"""

from __future__ import annotations

import hmac
import logging
from typing import Any

from fastapi import APIRouter, BackgroundTasks, Request

from core.errors import NotFound
from core.lanes import in_store_lane
from core.platforms.matrix_inbound import ENCRYPTED_ROOM, READ, MxTransaction, parse_event
from functions.auth import ApiError
from functions.bodies import parse_json
from functions.runtime import Runtime
from functions.webhooks import accept, read_body

MAX_PAYLOAD_BYTES = 2 * 1024 * 1024
log = logging.getLogger("iris.matrix")


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


def group_account(room_id: str) -> str:
    return f"matrix:group:{room_id}"


def is_group_room(rt: Runtime, room_id: str) -> bool:
    try:
        rt.store.users.resolve(group_account(room_id))
    except NotFound:
        return False
    return True


def mark_group(rt: Runtime, room_id: str) -> None:
    rt.store.users.for_account(group_account(room_id), kind="group")


def names_of(rt: Runtime, bot: str) -> tuple[str, ...]:
    """The names a person may address Iris by in a group room."""
    localpart = bot[1:].split(":", 1)[0]
    return tuple(n for n in (localpart, rt.settings.matrix_display_name) if n)


def build_router(rt: Runtime) -> APIRouter:
    router = APIRouter()

    @router.put("/_matrix/app/v1/transactions/{txn_id}")
    async def matrix_transaction(
        txn_id: str, request: Request, background: BackgroundTasks
    ) -> dict[str, object]:
        hs_token, bot = configured(rt)
        authenticate(request, hs_token)
        body = await read_body(request, MAX_PAYLOAD_BYTES)
        transaction = parse_json(MxTransaction, body, "a Matrix transaction", "M_BAD_JSON")
        sender = rt.senders.get("matrix")
        groups: dict[str, bool] = {}
        counted: set[str] = set()
        for event in transaction.events:
            room = event.room_id
            if event.type == "m.room.member" and room and sender is not None:
                if event.state_key == bot and event.content.get("membership") == "invite":
                    background.add_task(_join, rt, sender, room)
                elif event.content.get("membership") == "join" and room not in counted:
                    counted.add(room)
                    background.add_task(_count_members, rt, sender, room)
                continue
            if event.type not in READ or room is None or event.sender == bot:
                continue
            if room not in groups:
                groups[room] = await in_store_lane(room, is_group_room, rt, room)
            parsed = parse_event(
                event,
                bot=bot,
                names=names_of(rt, bot),
                group=groups[room],
                group_mode=rt.settings.group_reply_mode,
                image_bytes=rt.settings.image_max_bytes,
            )
            if parsed.message is not None:
                await accept(
                    rt,
                    parsed.message,
                    background,
                    group_ref=parsed.group_ref,
                    instead=parsed.reply,
                )
        return {}

    return router


async def _join(rt: Runtime, sender: Any, room_id: str) -> None:
    try:
        await sender.join(room_id)
    except Exception as exc:
        log.warning("could not join %s: %s", room_id, exc)
        return
    await _count_members(rt, sender, room_id)
    await _tell_if_encrypted(sender, room_id)


async def _tell_if_encrypted(sender: Any, room_id: str) -> None:
    """Iris cannot read an end-to-end encrypted room: say so once, as it joins (best effort;
    the send's transaction id is derived from the room and the text, so joining again sends
    nothing new)."""
    try:
        if await sender.room_encrypted(room_id):
            await sender.send({"chat_id": room_id}, ENCRYPTED_ROOM)
    except Exception as exc:
        log.warning("could not check or answer the encryption of %s: %s", room_id, exc)


async def _count_members(rt: Runtime, sender: Any, room_id: str) -> None:
    """Give a room of more than two joined members its group scope (best effort: a failure
    leaves the room as it was until its next membership change)."""
    try:
        members = await sender.joined_members(room_id)
    except Exception as exc:
        log.warning("could not count the members of %s: %s", room_id, exc)
        return
    if len(members) > 2:
        await in_store_lane(room_id, mark_group, rt, room_id)
