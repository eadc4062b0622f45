"""Bearer JWTs from platforms that sign their webhook calls with rotating RSA keys (the Bot
Connector of Microsoft Teams, Google Chat): the keys, fetched and cached, and the check.

``KeySet`` fetches a JSON Web Key Set, found directly (``jwks_url``) or through an OpenID
Connect metadata document's ``jwks_uri`` (``metadata_url``), keeps it ``ttl`` seconds of the
injected clock, and refetches it when a token names a key id it does not hold: keys rotate. A
forger naming made-up key ids cannot make Iris hammer the key server: an unknown kid refetches
at most once per ``refetch_after`` seconds, and fetches are serialised per key set.

``verify`` checks, in this order: the header's ``alg`` is RS256 (no ``none``, no HMAC: a public
key can never be used as a shared secret), the key id is one of the set's RSA keys, the
signature, then ``iss``, ``aud``, ``exp`` (required) and ``nbf`` against the injected clock with
``leeway`` seconds. PyJWT and httpx are imported on first use.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from core.clock import Clock

ALGORITHM = "RS256"
MAX_TOKEN_CHARS = 16_384
MAX_KEYSET_BYTES = 256 * 1024


class TokenRejected(Exception):
    """The bearer token is missing, malformed, forged, expired or meant for someone else."""


@dataclass
class KeySet:
    clock: Clock
    jwks_url: str | None = None
    metadata_url: str | None = None
    ttl: float = 24 * 3600.0
    refetch_after: float = 300.0
    _keys: dict[str, dict[str, Any]] = field(default_factory=dict)
    _fetched_at: float | None = None
    _lock: asyncio.Lock | None = None
    fetches: int = 0  # how many times the set was fetched (tests and doctor read it)

    async def key(self, kid: str) -> dict[str, Any] | None:
        """The JWK with id ``kid``; None when the key server does not list it."""
        now = self.clock.now()
        stale = self._fetched_at is None or now - self._fetched_at >= self.ttl
        if not stale and kid in self._keys:
            return self._keys[kid]
        may_refetch = stale or now - (self._fetched_at or 0.0) >= self.refetch_after
        if not may_refetch:
            return None
        if self._lock is None:
            self._lock = asyncio.Lock()
        before = self._fetched_at
        async with self._lock:
            if self._fetched_at == before:  # nobody refetched while this request waited
                await self._fetch()
        return self._keys.get(kid)

    async def _fetch(self) -> None:
        url = self.jwks_url
        if url is None:
            if self.metadata_url is None:
                raise TokenRejected("no key set configured")
            metadata = await _get_json(self.metadata_url)
            url = metadata.get("jwks_uri")
            if not isinstance(url, str) or not url.startswith(("https://", "http://")):
                raise TokenRejected("the OpenID metadata names no jwks_uri")
        document = await _get_json(url)
        keys = document.get("keys")
        if not isinstance(keys, list):
            raise TokenRejected("the key set has no keys")
        self._keys = {str(k["kid"]): k for k in keys
                      if isinstance(k, dict) and k.get("kty") == "RSA" and "kid" in k}
        self._fetched_at = self.clock.now()
        self.fetches += 1


async def _get_json(url: str) -> dict[str, Any]:
    import httpx

    from core.tls import tls_client

    try:
        async with tls_client(timeout=10.0) as http:
            response = await http.get(url)
    except httpx.HTTPError as exc:
        raise TokenRejected(f"could not fetch signing keys from {url}: "
                            f"{type(exc).__name__}") from exc
    if response.status_code != 200 or len(response.content) > MAX_KEYSET_BYTES:
        raise TokenRejected(f"could not fetch signing keys from {url}: "
                            f"HTTP {response.status_code}")
    try:
        data = json.loads(response.content)
    except ValueError:
        raise TokenRejected(f"signing keys from {url} are not JSON") from None
    if not isinstance(data, dict):
        raise TokenRejected(f"signing keys from {url} are not a JSON object")
    return data


def bearer(header: str | None) -> str:
    """The token of an ``Authorization: Bearer …`` header."""
    scheme, _, token = (header or "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise TokenRejected("no bearer token")
    if len(token) > MAX_TOKEN_CHARS:
        raise TokenRejected("bearer token too long")
    return token


@dataclass(frozen=True)
class Verified:
    claims: dict[str, Any]
    key: dict[str, Any]  # the JWK that signed it (Bot Framework keys carry endorsements)


async def verify(token: str, keys: KeySet, *, issuers: tuple[str, ...],
                 audiences: tuple[str, ...], leeway: float) -> Verified:
    import jwt

    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError as exc:
        raise TokenRejected(f"malformed token: {exc}") from None
    if header.get("alg") != ALGORITHM:
        raise TokenRejected(f"token algorithm {header.get('alg')!r} is not {ALGORITHM}")
    kid = header.get("kid")
    if not isinstance(kid, str) or not kid:
        raise TokenRejected("token names no key id")
    jwk = await keys.key(kid)
    if jwk is None:
        raise TokenRejected(f"token signed with an unknown key {kid!r}")
    try:
        public = jwt.PyJWK(jwk, algorithm=ALGORITHM).key
        claims = jwt.decode(token, public, algorithms=[ALGORITHM], options={
            "verify_exp": False, "verify_nbf": False, "verify_iat": False,
            "verify_aud": False, "verify_iss": False})
    except jwt.PyJWTError as exc:
        raise TokenRejected(f"bad token signature: {exc}") from None
    if claims.get("iss") not in issuers:
        raise TokenRejected(f"token issuer {claims.get('iss')!r} is not trusted")
    audience = claims.get("aud")
    named = audience if isinstance(audience, list) else [audience]
    if not any(a in audiences for a in named):
        raise TokenRejected(f"token audience {audience!r} is not this app")
    now = keys.clock.now()
    expires, not_before = claims.get("exp"), claims.get("nbf")
    if not isinstance(expires, int | float) or isinstance(expires, bool):
        raise TokenRejected("token has no expiry")
    if now > expires + leeway:
        raise TokenRejected("token expired")
    if not_before is not None and (not isinstance(not_before, int | float)
                                   or now < not_before - leeway):
        raise TokenRejected("token not valid yet")
    return Verified(claims, jwk)
