"""Outbound Slack: replies through slack_sdk's ``WebClient.chat_postMessage`` in mrkdwn.

A reply goes to its channel, in its thread when the message came from one (a mention in a
channel starts a thread there). Replies to ``/iris`` slash commands go to the command's
``response_url`` instead, so they work in channels the bot has not joined. Long replies are split
at 4,000 characters (Slack's recommended maximum) on paragraph boundaries.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from core.contracts.senders import DeliveryFailed
from core.errors import IrisUsageError
from core.lanes import blocking
from core.platforms.format_slack import render_block
from core.platforms.offload import formatted
from core.platforms.slack_actions import answered_blocks, question_blocks
from core.platforms.spec import ChatAddress, PlatformSpec
from core.platforms.split import Part, split_message

if TYPE_CHECKING:
    from core.config import Settings
    from core.messages import InboundMessage

log = logging.getLogger("iris.slack")

MESSAGE_LIMIT = 4000
DEFAULT_API_BASE = "https://slack.com/api/"
RETRYABLE = frozenset({
    "ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout",
    "team_added_to_org",
})


class SlackSender:
    def __init__(self, token: str, api_base: str | None = None) -> None:
        self.token = token
        base = api_base or DEFAULT_API_BASE
        self.api_base = base if base.endswith("/") else f"{base}/"
        self._client: Any = None

    def client(self) -> Any:
        if self._client is None:
            from slack_sdk import WebClient

            self._client = WebClient(token=self.token, base_url=self.api_base, timeout=15)
        return self._client

    def parts(self, text: str) -> list[Part]:
        return split_message(text, MESSAGE_LIMIT, render_block)

    async def send(self, target: dict[str, Any], text: str) -> list[str]:
        parts = await formatted(self.parts, text)
        return [await self.send_part(target, part, i) for i, part in enumerate(parts)]

    async def send_part(self, target: dict[str, Any], part: Part, index: int) -> str:
        try:
            if target.get("response_url"):
                return await blocking("io", _key(target), self._respond, target["response_url"],
                                      part, what="answering on Slack")
            choices = target.get("choices") if index == 0 else None
            blocks = question_blocks(part.rendered, choices) if choices else None
            response = await blocking(
                "io", _key(target), lambda: self.client().chat_postMessage(
                    channel=target["channel"], text=part.rendered, blocks=blocks,
                    thread_ts=target.get("thread_ts"), mrkdwn=True, unfurl_links=False,
                ), what="sending to Slack",
            )
            return str(response["ts"])
        except Exception as exc:
            raise failure(exc) from exc

    def _respond(self, url: str, part: Part) -> str:
        from slack_sdk.webhook import WebhookClient

        response = WebhookClient(url, timeout=15).send(
            text=part.rendered, response_type="ephemeral"
        )
        if response.status_code == 429 or response.status_code >= 500:
            raise DeliveryFailed(f"Slack response_url answered {response.status_code}")
        if response.status_code != 200:
            raise DeliveryFailed(
                f"Slack response_url refused ({response.status_code}): {response.body}",
                retryable=False,
            )
        return f"response_url:{response.status_code}"

    async def download(self, url: str) -> bytes:
        """A file someone shared (its ``url_private_download``), with the bot token. Only
        Slack's own hosts (or the configured API's host) get the token. Without the
        ``files:read`` scope Slack answers with its sign-in page instead of the file."""

        from core.intake.documents import DocumentRefused
        from core.platforms.media import fetch_capped
        from core.tls import tls_client

        host = (urlsplit(url).hostname or "").lower()
        if urlsplit(url).scheme not in ("https", "http") or not (
                host == "slack.com" or host.endswith(".slack.com")
                or host == urlsplit(self.api_base).hostname):
            raise DocumentRefused("the file is not on Slack's file servers")
        async with tls_client(timeout=30.0, follow_redirects=True, max_redirects=3) as http:
            data, content_type = await fetch_capped(
                http, url, headers={"Authorization": f"Bearer {self.token}"},
                what="the Slack file")
        if content_type.startswith("text/html") and data.lstrip()[:15].lower().startswith(
                (b"<!doctype html", b"<html")):
            raise DocumentRefused("Slack sent its sign-in page instead of the file: the Slack "
                                  "app needs the files:read scope")
        return data

    async def close_buttons(self, channel: str, ts: str, text: str, chosen: str) -> None:
        """Replace an answered question's buttons with the choice made (best effort)."""
        try:
            await blocking("io", f"slack:{channel}", lambda: self.client().chat_update(
                channel=channel, ts=ts, text=text, blocks=answered_blocks(text, chosen)),
                what="updating a Slack message")
        except Exception as exc:
            log.warning("could not take the buttons off a Slack question: %s", exc)

    async def remove_buttons(self, target: dict[str, Any], message_id: str, text: str,
                             outcome: str) -> None:
        """A question that closed without a press: its buttons give way to how it closed,
        as a press's do (``chat.update``). An answer through a slash command's response URL
        carried no buttons."""
        if target.get("response_url"):
            return
        await blocking("io", _key(target), lambda: self.client().chat_update(
            channel=target["channel"], ts=message_id, text=text,
            blocks=answered_blocks(text, outcome)), what="updating a Slack message")

    async def auth_test(self) -> dict[str, Any]:
        return dict((await blocking("io", "slack:auth", lambda: self.client().auth_test(),
                                     what="checking the Slack token")).data)


def _key(target: dict[str, Any]) -> str:
    """Whose blocking work a send is (``core.lanes``): its channel's."""
    return f"slack:{target.get('channel') or target.get('response_url', '')[:80]}"


def failure(exc: Exception) -> DeliveryFailed:
    from slack_sdk.errors import SlackApiError

    if isinstance(exc, DeliveryFailed):
        return exc
    if isinstance(exc, SlackApiError):
        response = exc.response
        error = response.get("error") if hasattr(response, "get") else None
        status = getattr(response, "status_code", 200)
        if status == 429:
            try:
                wait = float(response.headers.get("Retry-After", "1"))
            except (TypeError, ValueError, AttributeError):
                wait = 1.0
            return DeliveryFailed(f"Slack rate limit ({error})", retry_after=wait)
        retryable = status >= 500 or error in RETRYABLE
        return DeliveryFailed(f"Slack refused: {error or status}", retryable=retryable)
    return DeliveryFailed(f"Slack unreachable: {type(exc).__name__}: {exc}")


def _sender(settings: Settings) -> SlackSender | None:
    token = settings.secret("slack_bot_token")
    return SlackSender(token, settings.slack_api_base) if token else None


def _chat(chat_id: str, channel: str, thread: str | None) -> ChatAddress:
    key = f"slack:{chat_id}" + (f":{thread}" if thread else "")
    address = {"chat_id": chat_id, "thread_id": thread, "channel": channel, "thread_ts": thread}
    return ChatAddress(key, address, f"slack:{channel}" + (f":{thread}" if thread else ""))


def chat_address(message: InboundMessage) -> ChatAddress:
    channel = message.meta.get("channel") or message.chat_id.rsplit(":", 1)[-1]
    thread = message.meta.get("thread_ts") or message.thread_id
    found = _chat(message.chat_id, channel, thread)
    return ChatAddress(message.chat_key, {**found.address, "thread_id": message.thread_id},
                       found.label)


CHAT_HELP = "slack:[<team>:]<channel>[:<thread_ts>], e.g. slack:C0123ABC"
_TS = re.compile(r"\d+\.\d+")


def parse_chat(rest: str) -> ChatAddress:
    parts = [p for p in rest.split(":") if p]
    thread = parts.pop() if parts and _TS.fullmatch(parts[-1]) else None
    if not 1 <= len(parts) <= 2 or not all(re.fullmatch(r"[A-Za-z0-9_-]+", p) for p in parts):
        raise IrisUsageError(f"not a Slack channel: slack:{rest} (expected {CHAT_HELP})")
    return _chat(":".join(parts), parts[-1], thread)


def same_chat(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """The same channel and thread; a wanted address without a team matches any team."""
    same_channel = a.get("channel") == b.get("channel")
    team_ok = ":" not in str(b.get("chat_id")) or a.get("chat_id") == b.get("chat_id")
    return same_channel and team_ok and a.get("thread_ts") == b.get("thread_ts")


SPEC = PlatformSpec(
    name="slack", push=True, interactive=True, webhook="functions.slack", sender=_sender,
    prompt_hint="You are talking in Slack: keep answers short; Slack mrkdwn formatting.",
    chat_address=chat_address, parse_chat=parse_chat, same_chat=same_chat, chat_help=CHAT_HELP,
)
