"""Outbound Slack: replies through slack_sdk's ``WebClient.chat_postMessage`` in mrkdwn.

A reply goes to its channel, in its thread when the message came from one (a mention in a
channel starts a thread there). Replies to ``/iris`` slash commands go to the command's
``response_url`` instead, so they work in channels the bot has not joined. Long replies are split
at 4,000 characters (Slack's recommended maximum) on paragraph boundaries.
"""

from __future__ import annotations

import asyncio
from typing import Any

from core.platforms.delivery import DeliveryFailed
from core.platforms.format_slack import render_block
from core.platforms.split import Part, split_message

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
        return [await self.send_part(target, part, i) for i, part in enumerate(self.parts(text))]

    async def send_part(self, target: dict[str, Any], part: Part, index: int) -> str:
        try:
            if target.get("response_url"):
                return await asyncio.to_thread(self._respond, target["response_url"], part)
            response = await asyncio.to_thread(
                lambda: self.client().chat_postMessage(
                    channel=target["channel"], text=part.rendered,
                    thread_ts=target.get("thread_ts"), mrkdwn=True, unfurl_links=False,
                )
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

    async def auth_test(self) -> dict[str, Any]:
        return dict((await asyncio.to_thread(lambda: self.client().auth_test())).data)


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
