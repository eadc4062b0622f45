"""``POST /telegram/webhook``: verify Telegram's secret token, parse the update, record the
message once and dispatch its chat, answer 200. The turn runs after the ack, in a worker.

Telegram re-sends an update until it gets a 2xx, so updates Iris does not act on (edits,
stickers in groups, messages for someone else) are acknowledged too; only unauthenticated,
malformed or oversized requests are refused (403, 400, 413).
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import time

from fastapi import APIRouter, BackgroundTasks, Request

from core.platforms.inbound import Parsed
from core.platforms.telegram_inbound import (
    BotIdentity,
    TgCallbackQuery,
    TgUpdate,
    bot_id_from_token,
    needs_username,
    parse_update,
)
from functions.auth import ApiError
from functions.bodies import parse_json
from functions.runtime import Runtime
from functions.webhooks import Outcome, accept, accept_press, read_body

log = logging.getLogger("iris.telegram")

SECRET_HEADER = "x-telegram-bot-api-secret-token"
MAX_UPDATE_BYTES = 1024 * 1024
GET_ME_RETRY_SECONDS = 60.0


class BotNames:
    """The bot's @username, needed only to tell whether a group message mentions Iris. It comes
    from this process's memory or the store (``iris telegram set-webhook`` saves it); when
    neither has it, Telegram's getMe runs after the ack, never while Telegram waits, and its
    answer is stored for every container. Until then a group message counts as addressed to
    Iris only by a reply to Iris or a mention of its user id."""

    def __init__(self) -> None:
        self.username: str | None = None
        self._fetching = False
        self._failed_at = -GET_ME_RETRY_SECONDS

    def identity(self, rt: Runtime, token: str, update: TgUpdate,
                 background: BackgroundTasks) -> BotIdentity:
        bot_id = bot_id_from_token(token)
        if self.username is None and needs_username(update):
            stored = rt.store.bots.get("telegram", str(bot_id))
            if stored is not None:
                self.username = stored.get("username")
            elif not self._fetching and (
                    time.monotonic() - self._failed_at >= GET_ME_RETRY_SECONDS):
                self._fetching = True
                background.add_task(self.fetch, rt, str(bot_id))
        return BotIdentity(bot_id, self.username)

    async def fetch(self, rt: Runtime, bot_id: str) -> None:
        sender = rt.senders.get("telegram")
        get_me = getattr(sender, "get_me", None)
        try:
            if get_me is None:
                return
            me = await asyncio.wait_for(get_me(), timeout=5.0)
            rt.store.bots.put("telegram", bot_id, dict(me))
            self.username = me.get("username")
        except Exception as exc:
            self._failed_at = time.monotonic()
            log.warning("getMe failed (mentions by @username go unnoticed for now): %s", exc)
        finally:
            self._fetching = False


def check_secret(rt: Runtime, request: Request) -> str:
    """The bot token, once the request proved it comes from Telegram."""
    token = rt.settings.secret("telegram_token")
    if not token:
        raise ApiError(404, "Telegram is not configured on this Iris: set IRIS_TELEGRAM_TOKEN",
                       code="telegram_disabled")
    secret = rt.settings.secret("telegram_secret")
    if not secret:
        raise ApiError(503, "IRIS_TELEGRAM_SECRET is not set; run `iris telegram set-webhook "
                       "URL` to generate one and register it", code="telegram_secret_missing")
    given = request.headers.get(SECRET_HEADER, "").encode("latin-1")
    if not hmac.compare_digest(given, secret.encode()):
        raise ApiError(403, "missing or wrong X-Telegram-Bot-Api-Secret-Token",
                       code="bad_secret_token", kind="authentication_error")
    return token


def parse_body(body: bytes) -> TgUpdate:
    return parse_json(TgUpdate, body, "a Telegram update", "bad_update")


async def _press(rt: Runtime, press: TgCallbackQuery, parsed: Parsed,
                 background: BackgroundTasks) -> dict[str, object]:
    """A button press: recorded as the answer when it counts; its spinner is stopped either
    way (after the ack), and a press that counts takes the buttons off the question."""
    outcome = Outcome("ignored")
    if parsed.message is not None:
        outcome = await accept_press(rt, parsed.message, background,
                                     group_ref=parsed.group_ref, group_title=parsed.group_title)
    counted = outcome.status == "recorded"
    sender = rt.senders.get("telegram")
    answer = getattr(sender, "answer_button", None)
    if answer is not None:
        where = press.message
        background.add_task(
            answer, press.id, None if counted else "This question is closed.",
            where.chat.id if counted and where else None,
            where.message_id if counted and where else None)
    return {"ok": True, "status": outcome.status,
            "reason": parsed.reason or ("" if counted else "not an open question")}


def build_router(rt: Runtime) -> APIRouter:
    router = APIRouter()
    names = BotNames()

    @router.post("/telegram/webhook")
    async def telegram_webhook(request: Request, background: BackgroundTasks) -> dict[str, object]:
        token = check_secret(rt, request)
        update = parse_body(await read_body(request, MAX_UPDATE_BYTES))
        bot = names.identity(rt, token, update, background)
        parsed = parse_update(update, bot, group_mode=rt.settings.group_reply_mode)
        if update.callback_query is not None:
            return await _press(rt, update.callback_query, parsed, background)
        if parsed.message is None:
            return {"ok": True, "status": "ignored", "reason": parsed.reason}
        outcome = await accept(
            rt, parsed.message, background, group_ref=parsed.group_ref,
            group_title=parsed.group_title, instead=parsed.reply,
        )
        return {"ok": True, "status": outcome.status}

    return router
