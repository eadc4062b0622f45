"""Outbound Telegram: replies through python-telegram-bot's ``Bot`` (imported on first send).

Replies are split at Telegram's 4,096-character limit on paragraph boundaries and sent in its
HTML parse mode; a part Telegram refuses to parse ("can't parse entities") is sent again as
plain text. In groups the first part quotes the message it answers.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import re
import sys
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from core.contracts.senders import DeliveryFailed
from core.errors import IrisUsageError
from core.lanes import blocking
from core.platforms.format_telegram import render_block
from core.platforms.offload import formatted
from core.platforms.spec import ChatAddress, PlatformSpec
from core.platforms.split import Part, split_message

if TYPE_CHECKING:
    from core.config import Settings
    from core.messages import InboundMessage

log = logging.getLogger("iris.telegram")

MESSAGE_LIMIT = 4096
DEFAULT_API_BASE = "https://api.telegram.org"


class TelegramSender:
    def __init__(self, token: str, api_base: str | None = None) -> None:
        self.token = token
        self.api_base = (api_base or DEFAULT_API_BASE).rstrip("/")
        self._bot: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def bot(self) -> Any:
        """The ``Bot`` for the running event loop (its HTTP pool belongs to one loop). The
        library is imported in a thread the first time, so the loop keeps serving meanwhile."""
        loop = asyncio.get_running_loop()
        if self._bot is None or self._loop is not loop:
            if "telegram.request" not in sys.modules:
                await blocking("io", "import:telegram", importlib.import_module, "telegram.request",
                               what="loading python-telegram-bot")
            from telegram import Bot
            from telegram.request import HTTPXRequest

            request = HTTPXRequest(connection_pool_size=64, pool_timeout=10.0,
                                   read_timeout=15.0, connect_timeout=10.0)
            self._bot = Bot(self.token, base_url=f"{self.api_base}/bot",
                            base_file_url=f"{self.api_base}/file/bot", request=request)
            self._loop = loop
        return self._bot

    def parts(self, text: str) -> list[Part]:
        return split_message(text, MESSAGE_LIMIT, render_block)

    async def send(self, target: dict[str, Any], text: str) -> list[str]:
        parts = await formatted(self.parts, text)
        return [await self.send_part(target, part, i) for i, part in enumerate(parts)]

    async def send_part(self, target: dict[str, Any], part: Part, index: int) -> str:
        bot = await self.bot()
        from telegram.error import BadRequest, ChatMigrated

        chat_id = target["chat_id"]
        markup = _keyboard(target) if index == 0 else None
        try:
            try:
                return await _post(bot, chat_id, target, part.rendered, "HTML", index, markup)
            except BadRequest as exc:
                if "can't parse entities" not in exc.message.lower():
                    raise
                log.info("Telegram refused the formatting; sending part %d as plain text", index)
                return await _post(bot, chat_id, target, part.markdown, None, index, markup)
            except ChatMigrated as exc:
                return await _post(bot, exc.new_chat_id, target, part.rendered, "HTML", index,
                                   markup)
        except Exception as exc:
            raise failure(exc) from exc

    async def typing(self, target: dict[str, Any]) -> None:
        thread = target.get("thread_id")
        await (await self.bot()).send_chat_action(
            target["chat_id"], "typing", message_thread_id=int(thread) if thread else None
        )

    async def download(self, file_id: str) -> bytes:
        """A file the user sent (voice notes), by its Telegram file id."""
        bot = await self.bot()
        try:
            file = await bot.get_file(file_id)
            return bytes(await file.download_as_bytearray())
        except Exception as exc:
            raise failure(exc) from exc

    async def answer_button(self, callback_id: str, text: str | None,
                            chat_id: int | None, message_id: int | None) -> None:
        """Stop the pressed button's spinner and, for a press that counts, take the buttons
        off the question (best effort: the answer is recorded either way)."""
        bot = await self.bot()
        try:
            await bot.answer_callback_query(callback_id, text=text)
            if chat_id is not None and message_id is not None:
                await bot.edit_message_reply_markup(chat_id, message_id, reply_markup=None)
        except Exception as exc:
            log.warning("could not answer a button press: %s", exc)

    async def remove_buttons(self, target: dict[str, Any], message_id: str, text: str,
                             outcome: str) -> None:
        """Take the keyboard off a question that closed without a press
        (``editMessageReplyMarkup`` with no ``reply_markup``)."""
        bot = await self.bot()
        await bot.edit_message_reply_markup(target["chat_id"], int(message_id),
                                            reply_markup=None)

    async def send_voice(self, target: dict[str, Any], audio: bytes, filename: str) -> str:
        """A spoken reply: OGG/Opus as a voice note (sendVoice), anything else (MP3...) as an
        audio file (sendAudio), which Telegram plays all the same."""
        bot = await self.bot()
        thread = target.get("thread_id")
        try:
            if audio.startswith(b"OggS"):
                sent = await bot.send_voice(target["chat_id"], audio, filename=filename,
                                            message_thread_id=int(thread) if thread else None)
            else:
                sent = await bot.send_audio(target["chat_id"], audio, filename=filename,
                                            message_thread_id=int(thread) if thread else None)
        except Exception as exc:
            raise failure(exc) from exc
        return str(sent.message_id)

    async def get_me(self) -> dict[str, Any]:
        me = await (await self.bot()).get_me()
        return {"id": me.id, "username": me.username, "first_name": me.first_name}


def _keyboard(target: dict[str, Any]) -> Any:
    """An inline keyboard with a button per choice of a ``clarify`` question, or None."""
    choices = target.get("choices")
    if not choices:
        return None
    from telegram import InlineKeyboardButton, InlineKeyboardMarkup

    from core.asking.clarify import button_data

    return InlineKeyboardMarkup([
        [InlineKeyboardButton(label, callback_data=button_data(choices["id"], n))]
        for n, label in enumerate(choices["labels"], 1)
    ])


async def _post(
    bot: Any, chat_id: int | str, target: dict[str, Any], text: str, mode: str | None, index: int,
    markup: Any = None,
) -> str:
    from telegram import LinkPreviewOptions, ReplyParameters

    reply = None
    if index == 0 and target.get("quote") and target.get("message_id"):
        reply = ReplyParameters(int(target["message_id"]), allow_sending_without_reply=True)
    thread = target.get("thread_id")
    sent = await bot.send_message(
        chat_id, text, parse_mode=mode, reply_parameters=reply,
        message_thread_id=int(thread) if thread else None,
        link_preview_options=LinkPreviewOptions(is_disabled=True), reply_markup=markup,
    )
    return str(sent.message_id)


def failure(exc: Exception) -> DeliveryFailed:
    """A Telegram error as a delivery failure: retry what may succeed later, not the rest."""
    from telegram.error import BadRequest, Forbidden, InvalidToken, NetworkError, RetryAfter

    if isinstance(exc, DeliveryFailed):
        return exc
    if isinstance(exc, RetryAfter):
        wait = exc.retry_after
        seconds = wait.total_seconds() if isinstance(wait, timedelta) else float(wait)
        return DeliveryFailed(f"Telegram rate limit: {exc}", retry_after=seconds)
    if isinstance(exc, Forbidden | InvalidToken | BadRequest):
        return DeliveryFailed(f"Telegram refused: {exc}", retryable=False)
    if isinstance(exc, NetworkError):
        return DeliveryFailed(f"Telegram unreachable: {exc}")
    return DeliveryFailed(f"{type(exc).__name__}: {exc}")


def _sender(settings: Settings) -> TelegramSender | None:
    token = settings.secret("telegram_token")
    return TelegramSender(token, settings.telegram_api_base) if token else None


def _chat(chat_id: str, thread_id: str | None) -> ChatAddress:
    topic = f":{thread_id}" if thread_id else ""
    return ChatAddress(f"telegram:{chat_id}{topic}", {"chat_id": chat_id, "thread_id": thread_id},
                       f"telegram:{chat_id}{topic}")


def chat_address(message: InboundMessage) -> ChatAddress:
    return _chat(message.chat_id, message.thread_id)


CHAT_HELP = "telegram:<chat id>[:<topic id>], e.g. telegram:123456789"


def parse_chat(rest: str) -> ChatAddress:
    parts = [p for p in rest.split(":") if p]
    if not parts or len(parts) > 2 or not re.fullmatch(r"-?\d+", parts[0]) or (
        len(parts) == 2 and not parts[1].isdigit()
    ):
        raise IrisUsageError(f"not a Telegram chat: telegram:{rest} (expected {CHAT_HELP})")
    return _chat(parts[0], parts[1] if len(parts) == 2 else None)


def same_chat(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return str(a.get("chat_id")) == str(b.get("chat_id")) and a.get("thread_id") == b.get(
        "thread_id")


SPEC = PlatformSpec(
    name="telegram", push=True, interactive=True, webhook="functions.telegram", sender=_sender,
    prompt_hint="You are talking on Telegram: keep answers short; simple Markdown only.",
    chat_address=chat_address, parse_chat=parse_chat, same_chat=same_chat, chat_help=CHAT_HELP,
)
