"""``POST /teams/messages``: the messaging endpoint of a Microsoft Teams bot (Bot Framework).

Before the body is read as an activity, the ``Authorization: Bearer`` JWT the Bot Connector
sends is verified (``core.platforms.jwt_verify``): RS256 with a key from the key set named by
the Bot Framework's OpenID metadata, issuer ``https://api.botframework.com``, audience the bot's
app id, not expired (five minutes' leeway for clock skew, as the Bot Framework allows). Then the
activity's ``serviceUrl`` must be the token's ``serviceurl`` claim (Iris sends its bearer
token there), and its ``channelId`` one the signing key endorses. Anything else is 401 and
nothing is stored. A message is recorded once (the activity id) and its chat dispatched;
Teams gets 202 at once and the answer is posted to the conversation from the worker. A press
of an Adaptive Card button (``Action.Submit``) is recorded as the answer to its question.
"""

from __future__ import annotations

from fastapi import APIRouter, BackgroundTasks, Request
from fastapi.responses import Response

from core.platforms.jwt_verify import KeySet, TokenRejected, Verified, bearer, verify
from core.platforms.teams_buttons import parse_press, press_data
from core.platforms.teams_inbound import Activity, parse_activity
from functions.auth import ApiError
from functions.bodies import parse_json
from functions.runtime import Runtime
from functions.webhooks import accept, accept_press, read_body

MAX_ACTIVITY_BYTES = 1024 * 1024
ISSUER = "https://api.botframework.com"
LEEWAY = 300.0


def refused(reason: str) -> ApiError:
    return ApiError(401, f"Bot Framework token refused: {reason}", code="bad_token",
                    kind="authentication_error")


def parse_body(body: bytes) -> Activity:
    return parse_json(Activity, body, "a Bot Framework activity", "bad_activity")


def check_activity(verified: Verified, activity: Activity) -> None:
    """The activity is the one the token was issued for: same service URL, an endorsed
    channel."""
    if verified.claims.get("serviceurl") != activity.service_url:
        raise refused("the activity's serviceUrl is not the token's")
    endorsements = verified.key.get("endorsements")
    if isinstance(endorsements, list) and activity.channel_id not in endorsements:
        raise refused(f"the signing key does not endorse channel {activity.channel_id!r}")


def build_router(rt: Runtime) -> APIRouter:
    router = APIRouter()
    keys = KeySet(clock=rt.store.clock, metadata_url=rt.settings.teams_openid_url)

    @router.post("/teams/messages")
    async def teams_messages(request: Request, background: BackgroundTasks) -> Response:
        app_id = rt.settings.teams_app_id
        if not app_id:
            raise ApiError(404, "Microsoft Teams is not configured on this Iris: set "
                           "IRIS_TEAMS_APP_ID", code="teams_disabled")
        try:
            token = bearer(request.headers.get("authorization"))
            verified = await verify(token, keys, issuers=(ISSUER,), audiences=(app_id,),
                                    leeway=LEEWAY)
        except TokenRejected as exc:
            raise refused(str(exc)) from None
        body = await read_body(request, MAX_ACTIVITY_BYTES)
        activity = parse_body(body)
        check_activity(verified, activity)
        if press_data(activity) is not None:
            pressed = parse_press(activity)
            if pressed.message is not None:
                await accept_press(rt, pressed.message, background, group_ref=pressed.group_ref)
            return Response(status_code=202)
        parsed = parse_activity(activity)
        if parsed.message is not None:
            await accept(rt, parsed.message, background, group_ref=parsed.group_ref,
                         group_title=parsed.group_title, instead=parsed.reply)
        return Response(status_code=202)

    return router
