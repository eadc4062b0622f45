"""``POST /slack/events``: Slack's Events API and the ``/iris`` slash command.

The raw body's signature is checked once (the signing secret, on the process's clock), the body
is parsed once into its typed shape (an event envelope or a slash command), Slack's
``url_verification`` is answered, and a message event or command is recorded once and its chat
dispatched; the turn runs after the ack, in a worker. Everything else is acknowledged and
ignored. Slack re-sends an event it thinks failed (``X-Slack-Retry-Num``); a re-sent event maps
to the same inbox key, so it is a no-op. (Replies go out through slack_sdk's ``WebClient``.)
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
from urllib.parse import parse_qs

from fastapi import APIRouter, BackgroundTasks, Request
from fastapi.responses import JSONResponse, Response

from core.contracts.asked import Asked
from core.errors import NotFound
from core.platforms.inbound import Parsed
from core.platforms.slack_actions import SlackActions, parse_press
from core.platforms.slack_inbound import (
    SlackCommand,
    SlackEnvelope,
    bot_user_of,
    parse_command,
    parse_event,
)
from functions.auth import ApiError
from functions.bodies import parse_data, parse_json
from functions.runtime import Runtime
from functions.webhooks import accept, accept_press, read_body

log = logging.getLogger("iris.slack")

MAX_EVENT_BYTES = 1024 * 1024
MAX_SIGNATURE_AGE = 300
MESSAGE_EVENTS = ("message", "app_mention")


def _actions(raw: str) -> SlackActions | None:
    """An interactivity payload: button presses (``block_actions``); None for the rest."""
    try:
        kind = json.loads(raw).get("type")
    except (ValueError, AttributeError):
        raise ApiError(400, "not a Slack interactivity payload", code="bad_slack_request") from None
    if kind != "block_actions":
        return None
    return parse_json(SlackActions, raw, "a Slack interactivity payload", "bad_slack_request")


Shape = SlackEnvelope | SlackCommand | SlackActions


def validate(body: bytes, content_type: str) -> Shape | None:
    """The request's shape; None for payloads Iris ignores (other interactivity, Slack's
    ssl_check)."""
    if content_type.startswith("application/x-www-form-urlencoded"):
        try:
            form = {k: v[0] for k, v in parse_qs(body.decode(), strict_parsing=False).items()}
        except (UnicodeDecodeError, ValueError):
            raise ApiError(400, "not a Slack form body", code="bad_slack_request") from None
        if "payload" in form and "command" not in form:
            return _actions(form["payload"])
        if "ssl_check" in form and "command" not in form:
            return None
        return parse_data(SlackCommand, form, "a Slack slash command", "bad_slack_request")
    return parse_json(SlackEnvelope, body, "a Slack event", "bad_slack_request")


class SlackEndpoint:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    def configured(self) -> tuple[str, str]:
        secret = self.rt.settings.secret("slack_signing_secret")
        token = self.rt.settings.secret("slack_bot_token")
        if not secret and not token:
            raise ApiError(404, "Slack is not configured on this Iris: set "
                           "IRIS_SLACK_SIGNING_SECRET and IRIS_SLACK_BOT_TOKEN",
                           code="slack_disabled")
        if not secret or not token:
            missing = "IRIS_SLACK_SIGNING_SECRET" if not secret else "IRIS_SLACK_BOT_TOKEN"
            raise ApiError(503, f"Slack is half configured: {missing} is not set",
                           code="slack_not_configured")
        return secret, token

    def engaged(self, group_ref: str, chat_key: str) -> bool:
        try:
            owner = self.rt.store.users.resolve(f"slack:group:{group_ref}")
        except NotFound:
            return False
        store = self.rt.store
        return (store.sessions.latest(owner, chat_key) is not None
                or store.inbox.has_pending(owner, chat_key))

    def parsed(self, shape: SlackEnvelope | SlackCommand) -> Parsed:
        if isinstance(shape, SlackCommand):
            return parse_command(shape)
        return parse_event(shape, bot_user_id=bot_user_of(shape), engaged=self.engaged,
                           group_mode=self.rt.settings.group_reply_mode)

    async def press(self, shape: SlackActions, background: BackgroundTasks) -> str:
        """A button press on a ``clarify`` question: recorded as the answer when it counts,
        and then the question's buttons give way to the choice made."""
        parsed = parse_press(shape)
        if parsed.message is None:
            return "ignored"
        outcome = await accept_press(self.rt, parsed.message, background,
                                     group_ref=parsed.group_ref)
        sender = self.rt.senders.get("slack")
        close = getattr(sender, "close_buttons", None)
        pressed = parsed.message.press  # a block action parses to a press
        if outcome.status == "recorded" and outcome.user_id and close is not None \
                and pressed is not None:
            meta = parsed.message.meta
            question = self.rt.store.clarifications.get(outcome.user_id, pressed.question_id)
            if question is not None:
                asked = Asked(question.id, question.question, question.choices)
                background.add_task(close, meta["channel"], meta["question_ts"], asked.text(),
                                    question.choices[pressed.choice - 1])
        return outcome.status

    async def handle(self, request: Request, background: BackgroundTasks) -> Response:
        secret, _ = self.configured()
        body = await read_body(request, MAX_EVENT_BYTES)
        verify_signature(secret, body, request, now=self.rt.store.clock.now())
        shape = validate(body, request.headers.get("content-type", ""))
        if isinstance(shape, SlackEnvelope) and shape.type == "url_verification":
            return JSONResponse({"challenge": shape.challenge or ""})
        if isinstance(shape, SlackActions):
            await self.press(shape, background)
            return Response(status_code=200)
        if shape is None or (isinstance(shape, SlackEnvelope) and (
                shape.type != "event_callback" or shape.event is None
                or shape.event.type not in MESSAGE_EVENTS)):
            return Response(status_code=200)  # verified, but nothing Iris acts on
        parsed = self.parsed(shape)
        status = "ignored"
        if parsed.message is not None:
            outcome = await accept(self.rt, parsed.message, background,
                                   group_ref=parsed.group_ref, instead=parsed.reply)
            status = outcome.status
        retry = request.headers.get("x-slack-retry-num")
        if retry:
            log.info("Slack retry %s (%s): %s", retry, request.headers.get("x-slack-retry-reason"),
                     status)
        return Response(status_code=200)


def verify_signature(secret: str, body: bytes, request: Request, *, now: float) -> None:
    """Slack's v0 signature over the raw bytes, compared in constant time; requests more than
    five minutes from ``now`` are refused (replays)."""
    timestamp = request.headers.get("x-slack-request-timestamp", "")
    signature = request.headers.get("x-slack-signature", "")
    if not signature or not re.fullmatch(r"\d{1,12}", timestamp):
        raise ApiError(401, "missing or malformed Slack signature headers",
                       code="bad_signature", kind="authentication_error")
    if abs(now - int(timestamp)) > MAX_SIGNATURE_AGE:
        raise ApiError(401, "stale Slack request timestamp", code="bad_signature",
                       kind="authentication_error")
    base = b"v0:" + timestamp.encode() + b":" + body
    expected = "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected.encode(), signature.encode("latin-1")):
        raise ApiError(401, "invalid Slack signature", code="bad_signature",
                       kind="authentication_error")


def build_router(rt: Runtime) -> APIRouter:
    router = APIRouter()
    endpoint = SlackEndpoint(rt)

    @router.post("/slack/events")
    async def slack_events(request: Request, background: BackgroundTasks) -> Response:
        return await endpoint.handle(request, background)

    return router
