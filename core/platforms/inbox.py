"""The Iris inbox: where scheduled results go for people Iris cannot push a chat message to
(HTTP API callers, the terminal). Each result is a delivery on the ``inbox`` platform that waits
until read (``iris chat`` shows it, ``GET /v1/notifications`` returns it) and, when the user
registered a webhook, is pushed there too: a JSON POST signed with HMAC-SHA256 of the raw body
under the user's own secret (``X-Iris-Signature: sha256=<hex>``), retried with the delivery's
backoff, and counted as read once the webhook took it (any 2xx).

The webhook's URL is the user's choice, so it is held to ``web_extract``'s address rules at
registration and again at every push (``core.web.outbound``: connected to the address checked,
no proxy, no redirect). Every failed push, whatever its cause (a refused address, no answer, a
non-2xx status), is recorded with the same words and retried the same way, so a user cannot
learn from their deliveries what answers at an address; the cause goes to the log."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.contracts.senders import DeliveryFailed

if TYPE_CHECKING:
    from core.config import Settings
    from core.store import Store
    from core.store.deliveries import Delivery
    from core.web.fetch import FetchPolicy, Resolver

PLATFORM = "inbox"
SIGNATURE_HEADER = "X-Iris-Signature"
TIMEOUT_SECONDS = 10.0
NOT_TAKEN = "the webhook did not take the notification"
REFUSED = ("Iris sends notifications only to public http(s) addresses it can resolve, with no "
           "user name or password in the URL (IRIS_WEB_ALLOW_HOSTS exempts the hosts an "
           "operator names)")
log = logging.getLogger(__name__)


def webhook_policy(allow_hosts: frozenset[str], timeout: float = TIMEOUT_SECONDS) -> FetchPolicy:
    from core.web.fetch import FetchPolicy

    return FetchPolicy(allow_hosts=allow_hosts, timeout=timeout)


async def check_webhook_url(url: str, settings: Settings, resolver: Resolver | None) -> str:
    """The URL to register, or ``ValueError`` with the one reason given for any refusal (a
    refused address and an unresolvable name read alike: no probing the network by name)."""
    from core.addresses import AddressRefused
    from core.web.fetch import FetchFailed, system_resolver
    from core.web.outbound import check_url

    policy = webhook_policy(frozenset(settings.web_allow_hosts))
    try:
        return await check_url(url, policy, resolver=resolver or system_resolver)
    except (AddressRefused, FetchFailed) as exc:
        log.info("webhook URL refused at registration: %s", exc)
        raise ValueError(REFUSED) from None


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
    allow_hosts: frozenset[str] = frozenset()  # IRIS_WEB_ALLOW_HOSTS
    resolver: Resolver | None = None  # the system's DNS unless given (tests)
    timeout: float = TIMEOUT_SECONDS

    async def send(self, target: dict[str, Any], text: str) -> list[str]:
        raise DeliveryFailed("inbox deliveries are sent by record", retryable=False)

    async def send_record(self, delivery: Delivery) -> list[str]:
        """Push to the user's webhook, if any; without one the result waits to be read."""
        hook = self.store.webhooks.get(delivery.user_id)
        if hook is None:
            return []
        from core.addresses import AddressRefused
        from core.web.fetch import FetchFailed, system_resolver
        from core.web.outbound import post

        body = json.dumps({**notification_json(delivery), "sent_at": self.store.clock.now()},
                          ensure_ascii=False).encode()
        headers = {"Content-Type": "application/json",
                   SIGNATURE_HEADER: signature(hook.secret, body)}
        try:
            status = await post(hook.url, body, headers,
                                webhook_policy(self.allow_hosts, self.timeout),
                                resolver=self.resolver or system_resolver)
        except (AddressRefused, FetchFailed) as exc:
            log.info("webhook push %s for %s failed: %s", delivery.id, delivery.user_id, exc)
            raise DeliveryFailed(NOT_TAKEN) from None
        if not 200 <= status < 300:
            log.info("webhook push %s for %s answered %s", delivery.id, delivery.user_id, status)
            raise DeliveryFailed(NOT_TAKEN)
        self.store.deliveries.mark_one_read(delivery.user_id, delivery.id)
        return [f"webhook:{status}"]
