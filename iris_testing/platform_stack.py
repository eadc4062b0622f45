"""Iris served by uvicorn on loopback with the fake Telegram and Slack APIs behind its real
senders, an in-process model that echoes, and helpers to post webhooks the way the platforms
do. Used by the webhook tests and by bench/webhook_reliability.py."""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx

from core.clock import SYSTEM_CLOCK, Clock
from core.config import load_settings
from core.messages import Message, Usage
from core.model.llm import ModelResponse, ToolSpec
from core.store import open_store
from core.tls import tls
from functions.app import create_app
from functions.dispatch import LocalDispatcher
from functions.runtime import Runtime, compose
from iris_testing.discord_api import FakeDiscord
from iris_testing.googlechat_api import FakeGoogleChat
from iris_testing.line_api import FakeLine
from iris_testing.matrix_api import FakeHomeserver, matrix_env
from iris_testing.server import start_server
from iris_testing.slack_api import FakeSlack
from iris_testing.smtp_server import MailServer
from iris_testing.teams_api import FakeTeams
from iris_testing.telegram_api import FakeTelegram
from iris_testing.twilio_api import FakeTwilio, sms_env
from iris_testing.waiting import wait_until
from iris_testing.whatsapp_api import FakeWhatsApp

TELEGRAM_TOKEN = "7000001:test-token"
TELEGRAM_SECRET = "telegram-webhook-secret"
SLACK_SECRET = "slack-signing-secret"
SLACK_TOKEN = "xoxb-test-token"
WHATSAPP_TOKEN = "EAAG-test-token"
WHATSAPP_APP_SECRET = "whatsapp-app-secret"
WHATSAPP_VERIFY_TOKEN = "whatsapp-verify-token"
EMAIL_SECRET = "email-inbound-secret"
MAILGUN_KEY = "key-mailgun-signing"
IRIS_ADDRESS = "iris@iris.example.net"
LINE_TOKEN = "line-channel-access-token"
LINE_SECRET = "line-channel-secret"
TWILIO_TOKEN = "twilio-auth-token"
MATRIX_AS_TOKEN = "matrix-as-token"
MATRIX_HS_TOKEN = "matrix-hs-token"
PUBLIC_URL = "https://iris.example.net"  # what Twilio calls; a proxy forwards to loopback


@dataclass
class EchoModel:
    """Answers every turn with ``re: <the user's message>``. ``before`` (sync or async) runs
    first: tests use it to stall a turn, or return a Message to answer with instead."""

    name: str = "echo/test"
    seen: list[str] = field(default_factory=list)
    before: Callable[[list[Message]], Any] | None = None

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec] = ()
    ) -> ModelResponse:
        last = messages[-1].content
        self.seen.append(last)
        if self.before is not None:
            result = self.before(list(messages))
            if inspect.isawaitable(result):
                result = await result
            if isinstance(result, Message):
                return ModelResponse(message=result, usage=Usage(model=self.name))
        reply = Message(role="assistant", content=f"re: {last}")
        return ModelResponse(message=reply, usage=Usage(model=self.name, prompt_tokens=1))


@dataclass
class SplitRouter:
    """The turn's model and a separate side model (titles, reviews), so tests count turns."""

    model: Any
    side_model: Any

    def main(self, override: str | None = None) -> Any:
        return self.model

    def side(self) -> Any:
        return self.side_model


@dataclass
class Stack:
    rt: Runtime
    model: Any
    telegram: FakeTelegram
    slack: FakeSlack
    url: str
    http: httpx.Client
    env: dict[str, str] = field(default_factory=dict)  # the settings, as IRIS_* variables
    whatsapp: FakeWhatsApp = field(default_factory=lambda: FakeWhatsApp(token=WHATSAPP_TOKEN))
    discord: FakeDiscord = field(default_factory=FakeDiscord)
    mail: MailServer | None = None
    teams: FakeTeams | None = None  # with ``jwt_platforms``
    googlechat: FakeGoogleChat | None = None
    line: FakeLine = field(default_factory=lambda: FakeLine(token=LINE_TOKEN,
                                                            channel_secret=LINE_SECRET))
    twilio: FakeTwilio = field(default_factory=lambda: FakeTwilio(auth_token=TWILIO_TOKEN))
    matrix: FakeHomeserver = field(
        default_factory=lambda: FakeHomeserver(as_token=MATRIX_AS_TOKEN))

    def telegram_post(self, update: Any, *, secret: str | None = TELEGRAM_SECRET,
                      headers: dict[str, str] | None = None) -> httpx.Response:
        body = update if isinstance(update, bytes) else json.dumps(update).encode()
        sent = {"Content-Type": "application/json", **(headers or {})}
        if secret is not None:
            sent["X-Telegram-Bot-Api-Secret-Token"] = secret
        return self.http.post(f"{self.url}/telegram/webhook", content=body, headers=sent)

    def slack_post(self, payload: Any, *, retry: int | None = None,
                   secret: str = SLACK_SECRET, timestamp: int | None = None) -> httpx.Response:
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        headers = {"Content-Type": "application/json",
                   **FakeSlack.sign(body, secret, timestamp)}
        if retry is not None:
            headers["X-Slack-Retry-Num"] = str(retry)
            headers["X-Slack-Retry-Reason"] = "http_timeout"
        return self.http.post(f"{self.url}/slack/events", content=body, headers=headers)

    def slack_interact(self, payload: dict[str, Any], *, secret: str = SLACK_SECRET
                       ) -> httpx.Response:
        """An interactivity request as Slack sends it: the form field ``payload``."""
        body = urlencode({"payload": json.dumps(payload)}).encode()
        headers = {"Content-Type": "application/x-www-form-urlencoded",
                   **FakeSlack.sign(body, secret)}
        return self.http.post(f"{self.url}/slack/events", content=body, headers=headers)

    def whatsapp_post(self, payload: Any, *, secret: str | None = WHATSAPP_APP_SECRET
                      ) -> httpx.Response:
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        headers = {"Content-Type": "application/json"}
        if secret is not None:
            headers.update(FakeWhatsApp.sign(body, secret))
        return self.http.post(f"{self.url}/whatsapp/webhook", content=body, headers=headers)

    def line_post(self, payload: Any, *, secret: str | None = LINE_SECRET) -> httpx.Response:
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        headers = {"Content-Type": "application/json"}
        if secret is not None:
            headers.update(FakeLine.sign(body, secret))
        return self.http.post(f"{self.url}/line/webhook", content=body, headers=headers)

    def sms_post(self, form: dict[str, str], *, token: str | None = TWILIO_TOKEN,
                 url: str = PUBLIC_URL + "/sms/webhook") -> httpx.Response:
        """A form POST as Twilio sends it, signed for ``url`` (the public URL Twilio calls)."""
        headers = FakeTwilio.sign(url, form, token) if token is not None else {}
        return self.http.post(f"{self.url}/sms/webhook", data=form, headers=headers)

    def matrix_put(self, body: bytes, *, txn: str = "t1", token: str | None = MATRIX_HS_TOKEN,
                   legacy: bool = False) -> httpx.Response:
        """A transaction as the homeserver pushes it (``legacy``: the token as a query param)."""
        url = f"{self.url}/_matrix/app/v1/transactions/{txn}"
        headers = {"Content-Type": "application/json"}
        params = {}
        if token is not None and legacy:
            params["access_token"] = token
        elif token is not None:
            headers["Authorization"] = f"Bearer {token}"
        return self.http.put(url, content=body, headers=headers, params=params)

    def discord_post(self, interaction: Any, *, timestamp: int | None = None,
                     signer: FakeDiscord | None = None) -> httpx.Response:
        body = interaction if isinstance(interaction, bytes) else json.dumps(
            interaction).encode()
        headers = {"Content-Type": "application/json",
                   **(signer or self.discord).sign(body, timestamp)}
        return self.http.post(f"{self.url}/discord/interactions", content=body, headers=headers)

    def discord_interact(self, interaction: dict[str, Any], **sign: Any) -> httpx.Response:
        """Post an interaction as Discord does and apply Iris' response to the fake, as Discord
        applies it (a press's type 7 updates the pressed message)."""
        response = self.discord_post(interaction, **sign)
        if response.status_code == 200:
            self.discord.respond(interaction, response.json())
        return response

    def email_post(self, raw: bytes, *, secret: str | None = EMAIL_SECRET) -> httpx.Response:
        headers = {"Content-Type": "message/rfc822"}
        if secret is not None:
            headers["Authorization"] = f"Bearer {secret}"
        return self.http.post(f"{self.url}/email/inbound", content=raw, headers=headers)

    def mailgun_post(self, form: dict[str, str], *, multipart: bool = False,
                     attachments: dict[str, Any] | None = None) -> httpx.Response:
        if multipart or attachments:
            files = {name: (None, value) for name, value in form.items()}
            return self.http.post(f"{self.url}/email/inbound",
                                  files={**files, **(attachments or {})})
        return self.http.post(f"{self.url}/email/inbound", data=form)

    def mails(self) -> list[Any]:
        return self.mail.messages() if self.mail is not None else []

    def slack_command(self, text: str, *, user: str = "U123", channel: str = "D123",
                      response_url: str, trigger: str = "trig-1") -> httpx.Response:
        body = urlencode({
            "command": "/iris", "text": text, "user_id": user, "user_name": "ada",
            "channel_id": channel, "team_id": self.slack.team_id, "response_url": response_url,
            "trigger_id": trigger, "token": "x",
        }).encode()
        headers = {"Content-Type": "application/x-www-form-urlencoded",
                   **FakeSlack.sign(body, SLACK_SECRET)}
        return self.http.post(f"{self.url}/slack/events", content=body, headers=headers)

    def wait(self, predicate: Callable[[], object], what: str | None = None, *,
             timeout: float = 60.0) -> None:
        """``wait_until`` ``predicate``, named ``what`` (or after the predicate) on failure."""
        name = what or f"the platform stack: {getattr(predicate, '__qualname__', predicate)}"
        wait_until(predicate, name, timeout=timeout)

    def settled(self) -> bool:
        """Nothing pending in any inbox and no delivery still to send."""
        db = self.rt.store.db
        pending = db.scalar("SELECT count(*) FROM inbox WHERE status = 'pending'")
        unsent = db.scalar("SELECT count(*) FROM deliveries WHERE status = 'pending'")
        return pending == 0 and unsent == 0

    def finished(self) -> bool:
        """Settled, and every drain task (turns and their after-turn hooks) has ended."""
        running = getattr(self.rt.dispatcher, "running", 0)
        return self.settled() and running == 0


def _until_idle(dispatcher: object) -> None:
    wait_until(lambda: not getattr(dispatcher, "running", 0), "the dispatcher's drains to end",
               seen=lambda: {"running": getattr(dispatcher, "running", 0)})


class _Sweeping:
    """An ASGI app with a task in its event loop that attempts due deliveries now and then."""

    def __init__(self, app: Any, rt: Runtime, seconds: float):
        self.app, self.rt, self.seconds = app, rt, seconds
        self._task: asyncio.Task[None] | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._sweep())
        await self.app(scope, receive, send)

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(self.seconds)
            try:
                await self.rt.delivery.sweep()
            except Exception:
                logging.getLogger("iris.testing").exception("delivery sweep failed")


def discord_env(discord: FakeDiscord, url: str) -> dict[str, str]:
    return {"IRIS_DISCORD_PUBLIC_KEY": discord.public_key,
            "IRIS_DISCORD_BOT_TOKEN": discord.bot_token,
            "IRIS_DISCORD_APPLICATION_ID": discord.application_id,
            "IRIS_DISCORD_API_BASE": f"{url}/api/v10", "IRIS_DISCORD_ACCESS": "open"}


def line_env(url: str) -> dict[str, str]:
    return {"IRIS_LINE_CHANNEL_SECRET": LINE_SECRET, "IRIS_LINE_CHANNEL_ACCESS_TOKEN": LINE_TOKEN,
            "IRIS_LINE_API_BASE": url, "IRIS_LINE_DATA_API_BASE": url, "IRIS_LINE_ACCESS": "open"}


def stack_env(home: Path, telegram_url: str, slack_url: str, whatsapp_url: str = "",
              **extra: str) -> dict[str, str]:
    whatsapp = {
        "IRIS_WHATSAPP_TOKEN": WHATSAPP_TOKEN, "IRIS_WHATSAPP_APP_SECRET": WHATSAPP_APP_SECRET,
        "IRIS_WHATSAPP_VERIFY_TOKEN": WHATSAPP_VERIFY_TOKEN,
        "IRIS_WHATSAPP_PHONE_NUMBER_ID": FakeWhatsApp(token="").phone_number_id,
        "IRIS_WHATSAPP_API_BASE": f"{whatsapp_url}/v23.0", "IRIS_WHATSAPP_ACCESS": "open",
    } if whatsapp_url else {}
    # Where vectors are computed, as the process was told (the suite: inline, see
    # tests/conftest.py): settings built from this dict alone would take the default, an
    # indexing child process per stack.
    indexer = os.environ.get("IRIS_SEARCH_INDEXER")
    return {**whatsapp, **({"IRIS_SEARCH_INDEXER": indexer} if indexer else {}),
        "IRIS_HOME": str(home), "IRIS_API_KEY": "test-key",
        "IRIS_TELEGRAM_TOKEN": TELEGRAM_TOKEN, "IRIS_TELEGRAM_SECRET": TELEGRAM_SECRET,
        "IRIS_TELEGRAM_API_BASE": telegram_url,
        "IRIS_SLACK_SIGNING_SECRET": SLACK_SECRET, "IRIS_SLACK_BOT_TOKEN": SLACK_TOKEN,
        "IRIS_SLACK_API_BASE": f"{slack_url}/api/",
        "IRIS_TELEGRAM_ACCESS": "open", "IRIS_SLACK_ACCESS": "open",
        **extra,
    }


@contextmanager
def platform_stack(home: Path, *, model: Any = None, clock: Clock = SYSTEM_CLOCK,
                   sweep_seconds: float | None = None, dispatcher: Any = None,
                   jwt_platforms: bool = False, **env: str) -> Iterator[Stack]:
    """With ``sweep_seconds``, due deliveries (a send that failed and backs off) are retried that
    often, as the minute tick does in the cloud and in ``iris dev``. ``dispatcher``: the local
    one unless given (e.g. a ``ModalDispatcher`` over a fake). ``jwt_platforms``: also the fake
    Teams and Google Chat (their RSA keys take a moment to make), configured and served."""
    telegram, slack = FakeTelegram(), FakeSlack()
    whatsapp, discord = FakeWhatsApp(token=WHATSAPP_TOKEN), FakeDiscord()
    line = FakeLine(token=LINE_TOKEN, channel_secret=LINE_SECRET)
    twilio = FakeTwilio(auth_token=TWILIO_TOKEN)
    matrix = FakeHomeserver(as_token=MATRIX_AS_TOKEN)
    mail = MailServer(user="iris", password="smtp-pass").__enter__()
    model = model or EchoModel()
    servers = [start_server(telegram.app), start_server(slack.app), start_server(whatsapp.app),
               start_server(discord.app), start_server(line.app), start_server(twilio.app),
               start_server(matrix.app)]
    rt = None
    teams = googlechat = None
    if jwt_platforms:
        teams, googlechat = FakeTeams(), FakeGoogleChat()
        for fake in (teams, googlechat):
            served = start_server(fake.app)
            servers.append(served)
            fake.url = served.url
        env = {**teams.env(), **googlechat.env(), **env}
    try:
        email = {"IRIS_EMAIL_SMTP_URL": mail.url(), "IRIS_EMAIL_FROM": IRIS_ADDRESS,
                 "IRIS_EMAIL_INBOUND_SECRET": EMAIL_SECRET,
                 "IRIS_EMAIL_MAILGUN_SIGNING_KEY": MAILGUN_KEY, "IRIS_EMAIL_ACCESS": "open"}
        variables = stack_env(home, servers[0].url, servers[1].url, servers[2].url,
                              **{**discord_env(discord, servers[3].url),
                                 **line_env(servers[4].url),
                                 **sms_env(servers[5].url, TWILIO_TOKEN, PUBLIC_URL),
                                 **matrix_env(servers[6].url, MATRIX_AS_TOKEN, MATRIX_HS_TOKEN),
                                 **email, **env})
        twilio.base_url = servers[5].url
        slack.public_url = servers[1].url
        dispatcher = dispatcher or LocalDispatcher()
        settings = load_settings(variables)
        rt = compose(settings, dispatcher=dispatcher, store=open_store(settings, clock=clock),
                           router=SplitRouter(model, EchoModel("side")))
        app = create_app(rt)
        iris = start_server(app if sweep_seconds is None else _Sweeping(app, rt, sweep_seconds))
        servers.append(iris)
        with httpx.Client(timeout=30, verify=tls()) as http:  # the shared context: no CA load
            yield Stack(rt, model, telegram, slack, iris.url, http, variables, whatsapp=whatsapp,
                        discord=discord, mail=mail, teams=teams, googlechat=googlechat,
                        line=line, twilio=twilio, matrix=matrix)
    finally:
        if rt is not None:  # let drains and after-turn steps end before their store closes
            _until_idle(rt.dispatcher)
        for server in servers:  # stop together: each takes a few uvicorn ticks
            server.request_stop()
        for server in servers:
            server.thread.join(timeout=10)
        mail.__exit__(None, None, None)
        if rt is not None:
            rt.close()
