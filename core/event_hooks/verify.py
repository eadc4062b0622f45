"""Checking an event webhook delivery's signature over the raw body, before anything reads it.

Two schemes, tried in this order:

- GitHub's: ``X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>``, the delivery id in
  ``X-GitHub-Delivery`` (GitHub's "Validating webhook deliveries" documentation).
- Iris' generic one, for anything else: ``X-Iris-Signature: t=<unix seconds>,v1=<hex
  HMAC-SHA256 of "<t>.<body>">``, optional ``X-Iris-Delivery: <id>``. ``t`` must be within the
  replay window of the server's clock; several ``v1=`` values are accepted (secret rotation).

Without a delivery id header the delivery's id is the SHA-256 of its body: the same body
sent twice runs once.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass

GITHUB_HEADER = "x-hub-signature-256"
GITHUB_DELIVERY = "x-github-delivery"
GENERIC_HEADER = "x-iris-signature"
GENERIC_DELIVERY = "x-iris-delivery"
MAX_DELIVERY_ID = 200


class Forged(Exception):
    """The delivery is unsigned, signed with another secret, stale, or malformed."""


@dataclass(frozen=True)
class Verified:
    scheme: str  # github | generic
    delivery_id: str  # the sender's id, or "sha256:<body hash>"


def _digest(secret: str, data: bytes) -> str:
    return hmac.new(secret.encode(), data, hashlib.sha256).hexdigest()


def verify(
    headers: Mapping[str, str], body: bytes, secret: str, *, now: float, window: float
) -> Verified:
    """The delivery's scheme and id, or Forged. ``headers`` keys are lower-case."""
    github = headers.get(GITHUB_HEADER)
    if github is not None:
        scheme, _, given = github.strip().partition("=")
        if scheme != "sha256" or not hmac.compare_digest(
            given.lower().encode(), _digest(secret, body).encode()
        ):
            raise Forged("X-Hub-Signature-256 does not match")
        return Verified("github", _delivery(headers.get(GITHUB_DELIVERY), body))
    generic = headers.get(GENERIC_HEADER)
    if generic is None:
        raise Forged(f"no signature: send {GITHUB_HEADER} or {GENERIC_HEADER}")
    stamp, candidates = _parse_generic(generic)
    try:
        at = int(stamp)
    except ValueError:
        raise Forged("X-Iris-Signature's t= is not a number of seconds") from None
    if abs(now - at) > window:
        raise Forged(f"X-Iris-Signature's t= is more than {window:.0f}s from now")
    expected = _digest(secret, stamp.encode() + b"." + body).encode()
    if not any(hmac.compare_digest(c.lower().encode(), expected) for c in candidates):
        raise Forged("X-Iris-Signature does not match")
    return Verified("generic", _delivery(headers.get(GENERIC_DELIVERY), body))


def sign_generic(secret: str, body: bytes, at: int) -> str:
    """The ``X-Iris-Signature`` value for ``body`` sent at ``at`` (for senders and tests)."""
    return f"t={at},v1={_digest(secret, str(at).encode() + b'.' + body)}"


def sign_github(secret: str, body: bytes) -> str:
    return f"sha256={_digest(secret, body)}"


def _parse_generic(value: str) -> tuple[str, list[str]]:
    stamp, candidates = "", []
    for part in value.split(","):
        key, _, item = part.strip().partition("=")
        if key == "t":
            stamp = item
        elif key == "v1":
            candidates.append(item)
    if not stamp or not candidates:
        raise Forged("X-Iris-Signature needs t=<seconds>,v1=<hex hmac>")
    return stamp, candidates[:5]


def _delivery(given: str | None, body: bytes) -> str:
    given = (given or "").strip()
    if given and len(given) <= MAX_DELIVERY_ID and given.isprintable():
        return given
    return "sha256:" + hashlib.sha256(body).hexdigest()
