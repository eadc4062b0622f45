"""The cloud dispatcher: drain a chat in the deployed app's ``Worker`` container with ``.spawn()``.

Same interface as ``LocalDispatcher``. ``modal`` is imported on first dispatch, not on import, so
the webhook ack path stays light. The inbox entry is already stored when ``drain`` is called, so a
spawn that keeps failing is logged, not raised: the cron tick's sweeper resumes the chat.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from core.contracts.dispatch import ChatRef
from functions.modal_spawn import ModalSpawner

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
        self._spawner = ModalSpawner(app_name, WORKER_CLASS, WORKER_METHOD, sdk=sdk,
                                     attempts=attempts, backoff=backoff)

    @property
    def sdk(self) -> Any:
        return self._spawner.sdk

    @sdk.setter
    def sdk(self, value: Any) -> None:
        self._spawner.sdk = value

    def answer_channel(self) -> Answers:
        """Answers as they are produced, relayed between the worker and web containers."""
        from functions.answer_relay_modal import ModalAnswerRelay

        return ModalAnswerRelay(f"{self.app_name}-answers", self._spawner.modal)

    async def drain(self, chat: ChatRef) -> None:
        done = await self._spawner.spawn(chat.user_id, chat.chat_key, what=f"chat {chat.chat_key}")
        if done.outcome == "missing":
            log.error(
                "no %s.%s in Modal app %r (%s): is it deployed? `iris deploy` deploys it; "
                "chat %s stays pending", WORKER_CLASS, WORKER_METHOD, self.app_name, done.error,
                chat.chat_key,
            )
        elif done.outcome == "failed":
            log.error(
                "could not spawn a worker for chat %s after %d attempts (%s); the cron "
                "tick's sweeper will resume it", chat.chat_key, done.attempts, done.error,
            )
