"""An OAuth 2.0 access token from a token endpoint, cached until shortly before it expires.

Shared by the senders that authenticate with a token grant: Teams (client credentials against
the Microsoft identity platform) and Google Chat (a service account's JWT bearer grant). The
form is the grant's; the answer is RFC 6749's ``{"access_token", "expires_in"}`` or an error.
"""

from __future__ import annotations

import time
from typing import Any

from core.contracts.senders import DeliveryFailed

MARGIN = 300.0  # seconds before expiry a cached token is replaced


class CachedToken:
    def __init__(self, what: str) -> None:
        self.what = what  # names the endpoint in errors, e.g. "Teams token endpoint"
        self._value: str | None = None
        self._until = 0.0

    def fresh(self) -> str | None:
        """The cached token while it has more than ``MARGIN`` seconds left, else None."""
        if self._value is not None and time.monotonic() < self._until:
            return self._value
        return None

    def drop(self) -> None:
        """Forget the token (the platform refused it): the next call fetches a new one."""
        self._value = None

    async def fetch(self, url: str, form: dict[str, Any]) -> str:
        """POST the grant's form to the token endpoint; the new token, cached."""
        import httpx

        from core.tls import tls_client

        try:
            async with tls_client(timeout=15.0) as http:
                response = await http.post(url, data=form)
        except httpx.HTTPError as exc:
            raise DeliveryFailed(f"{self.what} unreachable: {exc}") from exc
        try:
            data = response.json()
        except ValueError:
            data = {}
        if response.status_code != 200 or not isinstance(data, dict) or \
                not isinstance(data.get("access_token"), str):
            detail = data.get("error_description") or data.get("error") if isinstance(
                data, dict) else None
            raise DeliveryFailed(f"{self.what} answered {response.status_code}: {detail}",
                                 retryable=response.status_code >= 500)
        value: str = data["access_token"]
        self._value = value
        self._until = time.monotonic() + max(float(data.get("expires_in") or 0) - MARGIN, 0.0)
        return value
