"""The cloud dispatcher: drain a chat in the deployed app's ``Worker`` container with ``.spawn()``.

Same interface as ``LocalDispatcher``. ``modal`` is imported on first dispatch, not on import, so
the webhook ack path stays light. The inbox entry is already stored when ``drain`` is called, so a
spawn that keeps failing is logged, not raised: the cron tick's sweeper resumes the chat.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from core.dispatch import ChatRef

if TYPE_CHECKING:
    from core.model.streaming import Answers

log = logging.getLogger("iris.dispatch")

WORKER_CLASS = "Worker"
WORKER_METHOD = "drain"


class ModalDispatcher:
    def __init__(
        self,
        app_name: str,
        *,
        sdk: Any = None,
        attempts: int = 3,
        backoff: float = 0.2,
    ) -> None:
        """``app_name``: the deployed Modal app (setting ``modal_app``); ``sdk`` is the
        ``modal`` module or an object offering ``Cls.from_name`` and ``exception``."""
        self.app_name = app_name
        self.sdk = sdk
        self.attempts = max(1, attempts)
        self.backoff = backoff
        self._worker: Any = None

    def _modal(self) -> Any:
        if self.sdk is None:
            import modal

            self.sdk = modal
        return self.sdk

    def answer_channel(self) -> Answers:
        """Answers as they are produced, relayed between the worker and web containers."""
        from functions.answer_relay_modal import ModalAnswerRelay

        return ModalAnswerRelay(f"{self.app_name}-answers", self._modal)

    def _worker_handle(self) -> Any:
        if self._worker is None:
            worker_cls = self._modal().Cls.from_name(self.app_name, WORKER_CLASS)
            self._worker = worker_cls()
        return self._worker

    async def drain(self, chat: ChatRef) -> None:
        modal = self._modal()
        not_found = modal.exception.NotFoundError
        for attempt in range(1, self.attempts + 1):
            try:
                method = getattr(self._worker_handle(), WORKER_METHOD)
                await method.spawn.aio(chat.user_id, chat.chat_key)
                return
            except not_found as exc:
                self._worker = None
                log.error(
                    "no %s.%s in Modal app %r (%s): is it deployed? `iris deploy` deploys it; "
                    "chat %s stays pending", WORKER_CLASS, WORKER_METHOD, self.app_name, exc,
                    chat.chat_key,
                )
                return
            except (modal.exception.Error, OSError, TimeoutError) as exc:
                self._worker = None
                if attempt == self.attempts:
                    log.error(
                        "could not spawn a worker for chat %s after %d attempts (%s); the cron "
                        "tick's sweeper will resume it", chat.chat_key, attempt, exc,
                    )
                    return
                log.warning("spawn for chat %s failed (%s); retrying", chat.chat_key, exc)
                await asyncio.sleep(self.backoff * 2 ** (attempt - 1))
