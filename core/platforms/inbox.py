"""The Iris inbox: where scheduled results go for people Iris cannot push a chat message to
(HTTP API callers, the terminal). Each result is a delivery on the ``inbox`` platform that waits
until read (``iris chat`` shows it, ``GET /v1/notifications`` returns it) and, when the user
registered a webhook, is pushed there too: a JSON POST signed with HMAC-SHA256 of the raw body
under the user's own secret (``X-Iris-Signature: sha256=<hex>``), retried with the delivery's
backoff, and counted as read once the webhook took it (any 2xx)."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.platforms.delivery import DeliveryFailed

if TYPE_CHECKING:
    from core.store import Store
    from core.store.deliveries import Delivery

PLATFORM = "inbox"
SIGNATURE_HEADER = "X-Iris-Signature"
TIMEOUT_SECONDS = 10.0


def new_secret() -> str:
    return "whsec_" + secrets.token_urlsafe(32)


def signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def notification_json(delivery: Delivery) -> dict[str, Any]:
    return {"id": delivery.id, "object": "iris.notification", "text": delivery.text,
            "source": delivery.source, "created_at": delivery.created_at}


@dataclass
class InboxSender:
    store: Store
    timeout: float = TIMEOUT_SECONDS

    async def send(self, target: dict[str, Any], text: str) -> list[str]:
        raise DeliveryFailed("inbox deliveries are sent by record", retryable=False)

    async def send_record(self, delivery: Delivery) -> list[str]:
        """Push to the user's webhook, if any; without one the result waits to be read."""
        hook = self.store.webhooks.get(delivery.user_id)
        if hook is None:
            return []
        import httpx

        body = json.dumps({**notification_json(delivery), "sent_at": self.store.clock.now()},
                          ensure_ascii=False).encode()
        headers = {"Content-Type": "application/json",
                   SIGNATURE_HEADER: signature(hook.secret, body)}
        try:
            async with httpx.AsyncClient(timeout=self.timeout) as client:
                response = await client.post(hook.url, content=body, headers=headers)
        except httpx.HTTPError as exc:
            raise DeliveryFailed(f"webhook {hook.url}: {type(exc).__name__}: {exc}") from exc
        if response.status_code >= 300:
            retryable = response.status_code >= 500 or response.status_code in (408, 429)
            raise DeliveryFailed(f"webhook {hook.url} answered {response.status_code}",
                                 retryable=retryable)
        self.store.deliveries.mark_one_read(delivery.user_id, delivery.id)
        return [f"webhook:{response.status_code}"]
