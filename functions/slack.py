"""``POST /slack/events``: Slack's Events API and the ``/iris`` slash command, through slack-bolt
with ``process_before_response=True`` (the function-as-a-service mode: listeners finish before
the response, nothing runs in the background of a container that may be frozen).

The request is checked against the signing secret, handed to bolt (which answers
``url_verification``, drops the bot's own events and routes the rest to listeners that only
collect them), then each collected message is recorded once and its chat dispatched; the turn
runs after the ack, in a worker. Slack re-sends an event it thinks failed (``X-Slack-Retry-Num``);
a re-sent event maps to the same inbox key, so it is a no-op.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter, BackgroundTasks, Request
from fastapi.responses import Response
from pydantic import ValidationError

from core.errors import NotFound
from core.platforms.inbound import Parsed
from core.platforms.slack_inbound import (
    SlackCommand,
    SlackEnvelope,
    bot_user_of,
    parse_command,
    parse_event,
)
from functions.auth import ApiError
from functions.runtime import Runtime
from functions.webhooks import Outcome, accept, read_body

log = logging.getLogger("iris.slack")

MAX_EVENT_BYTES = 1024 * 1024
MAX_SIGNATURE_AGE = 300
COLLECTED = "iris_collected"
BOT_USER = "iris_bot_user_id"


def _reject(exc: ValidationError, what: str) -> ApiError:
    first = exc.errors()[0] if exc.errors() else {}
    where = ".".join(str(p) for p in first.get("loc", ())) or "body"
    problem = "not valid JSON" if first.get("type") == "json_invalid" else first.get("msg")
    return ApiError(400, f"not a Slack {what}: {where}: {problem}", code="bad_slack_request")


def validate(body: bytes, content_type: str) -> SlackEnvelope | SlackCommand | None:
    """The request's shape, checked before bolt sees it; None for payloads Iris ignores
    (interactivity, Slack's ssl_check)."""
    if content_type.startswith("application/x-www-form-urlencoded"):
        try:
            form = {k: v[0] for k, v in parse_qs(body.decode(), strict_parsing=False).items()}
        except (UnicodeDecodeError, ValueError):
            raise ApiError(400, "not a Slack form body", code="bad_slack_request") from None
        if ("payload" in form or "ssl_check" in form) and "command" not in form:
            return None
        try:
            return SlackCommand.model_validate(form)
        except ValidationError as exc:
            raise _reject(exc, "slash command") from None
    try:
        return SlackEnvelope.model_validate_json(body)
    except ValidationError as exc:
        raise _reject(exc, "event") from None


class SlackEndpoint:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self._bolt: Any = None
        self._built_for: tuple[str, str] | None = None

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

    def bolt(self, secret: str, token: str) -> Any:
        if self._bolt is None or self._built_for != (secret, token):
            self._bolt = build_bolt(secret, token, self.rt.settings.slack_api_base)
            self._built_for = (secret, token)
        return self._bolt

    def engaged(self, group_ref: str, chat_key: str) -> bool:
        try:
            owner = self.rt.store.users.resolve(f"slack:group:{group_ref}")
        except NotFound:
            return False
        store = self.rt.store
        return (store.sessions.latest(owner, chat_key) is not None
                or store.inbox.has_pending(owner, chat_key))

    def parsed(self, item: tuple[str, dict[str, Any]], bot_user: str | None) -> Parsed:
        kind, payload = item
        if kind == "command":
            return parse_command(SlackCommand.model_validate(payload))
        envelope = SlackEnvelope.model_validate(payload)
        return parse_event(envelope, bot_user_id=bot_user, engaged=self.engaged,
                           group_mode=self.rt.settings.group_reply_mode)

    async def handle(self, request: Request, background: BackgroundTasks) -> Response:
        from slack_bolt.request import BoltRequest

        secret, token = self.configured()
        body = await read_body(request, MAX_EVENT_BYTES)
        verify_signature(secret, body, request, now=self.rt.store.clock.now())
        shape = validate(body, request.headers.get("content-type", ""))
        bot_user = bot_user_of(shape) if isinstance(shape, SlackEnvelope) else None
        bolt_request = BoltRequest(
            body=body.decode(), query=request.url.query,
            headers={k: [v] for k, v in request.headers.items()},
            context={COLLECTED: [], BOT_USER: bot_user},
        )
        answer = self.bolt(secret, token).dispatch(bolt_request)
        if answer.status == 404:  # verified, but nothing Iris listens to
            return Response(status_code=200)
        outcomes: list[Outcome] = []
        for item in bolt_request.context[COLLECTED]:
            parsed = self.parsed(item, bot_user)
            if parsed.message is not None:
                outcomes.append(await accept(
                    self.rt, parsed.message, background, group_ref=parsed.group_ref,
                    instead=parsed.reply,
                ))
        retry = request.headers.get("x-slack-retry-num")
        if retry:
            log.info("Slack retry %s (%s): %s", retry, request.headers.get("x-slack-retry-reason"),
                     [o.status for o in outcomes])
        headers = {k: v[0] for k, v in answer.headers.items()
                   if v and k.lower() != "content-length"}
        return Response(content=answer.body, status_code=answer.status, headers=headers)


def verify_signature(secret: str, body: bytes, request: Request, *, now: float) -> None:
    """Slack's v0 signature over the raw bytes, compared in constant time; requests more than
    five minutes from ``now`` are refused (replays). Bolt's own check is switched off: this one
    is the only one, on the process's clock."""
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


def build_bolt(secret: str, token: str, api_base: str) -> Any:
    from slack_bolt import App
    from slack_bolt.authorization import AuthorizeResult
    from slack_sdk import WebClient

    def authorize(enterprise_id: str | None, team_id: str | None,
                  context: dict[str, Any]) -> AuthorizeResult:
        return AuthorizeResult(enterprise_id=enterprise_id, team_id=team_id, bot_token=token,
                               bot_user_id=context.get(BOT_USER))

    app = App(
        signing_secret=secret, authorize=authorize, process_before_response=True,
        request_verification_enabled=False,
        client=WebClient(base_url=api_base), logger=logging.getLogger("iris.slack.bolt"),
    )

    def collect_event(ack: Any, body: dict[str, Any], context: Any) -> None:
        ack()
        context[COLLECTED].append(("event", body))

    def collect_command(ack: Any, command: dict[str, Any], context: Any) -> None:
        ack()
        context[COLLECTED].append(("command", command))

    def ignore(ack: Any) -> None:
        ack()

    app.event("message")(collect_event)
    app.event("app_mention")(collect_event)
    app.command(re.compile(r"^/.+"))(collect_command)
    app.event(re.compile(r".*"))(ignore)
    return app


def build_router(rt: Runtime) -> APIRouter:
    router = APIRouter()
    endpoint = SlackEndpoint(rt)

    @router.post("/slack/events")
    async def slack_events(request: Request, background: BackgroundTasks) -> Response:
        return await endpoint.handle(request, background)

    return router
