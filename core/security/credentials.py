"""Credential formats: what a secret looks like, and how to show one masked."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import cast

from core.security import linear
from core.security.linear import Match, Regex

# A run of token characters; the character before it (kept by the masking) is not one.
LONG_TOKEN = linear.compile(r"(?P<pre>^|[^\w/+=-])(?P<token>[A-Za-z0-9_\-+/=]{24,})")


@dataclass(frozen=True)
class _Secret:
    reason: str
    strict: Regex  # for NFKC text, case-sensitive
    loose: Regex  # for excerpts, which may be casefolded
    keep: int  # characters left visible when masking; -1 keeps the whole match
    valid: Callable[[Match], bool]


def _secret(reason: str, regex: str, keep: int = 4,
            valid: Callable[[Match], bool] | None = None) -> _Secret:
    strict, loose = linear.compile(regex), linear.compile(regex, re.I)
    return _Secret(reason, strict, loose, keep, valid or _not_placeholder)


def _not_placeholder(match: Match) -> bool:
    body = match.group(0)
    return Counter(body).most_common(1)[0][1] <= len(body) // 2


def _exactly(length: int) -> Callable[[Match], bool]:
    """A token of exactly ``length`` characters: the pattern takes the whole run of token
    characters, so a longer run (not this kind of token) is told apart here."""
    return lambda match: len(match.group(0)) == length and _not_placeholder(match)


def _letters_and_digits(match: Match) -> bool:
    body = match.group(0)[3:]
    mixed = any(c.isdigit() for c in body) and any(c.isalpha() for c in body)
    return mixed and _not_placeholder(match)


_PLACEHOLDER = linear.compile(
    r"your|example|change.?me|placeholder|redacted|dummy|sample|x{4}|\*{3}|\.\.\.|vault|keychain"
    r"|environ|getenv|secrets\.|process\.env|import\.meta\.env"
)


def _secret_value(match: Match) -> bool:
    value = match.group("value")
    if re.search(r"[$<>{}\[\]()%]|://", value) or value[0] in "/~.":
        return False  # a reference, template or path, not the secret itself
    if _PLACEHOLDER.search(value.lower()) or re.fullmatch(r"[a-z]+(?:[-_.][a-z0-9]+)+", value):
        return False  # a placeholder, or a name such as stored-in-1password
    if not any(c.isdigit() for c in value) and len(value) < 20:
        return False  # a word, however decorated (**Settings, Password!): not a key
    symbols = any(not c.isalnum() for c in value)
    return looks_random(value, 2.5 if symbols else 3.0) and not value.isalpha()


_EXAMPLE_WORDS = linear.compile(
    r"(?i:password|passwd|passphrase|pass|secret|admin|test|demo|fake|mock|qwerty|letmein|abc|xyz)"
)


def example_password(value: str) -> bool:
    """A value spelt from the words documentation uses for made-up passwords (``password123``,
    ``adminpass123``, ``mySecretPassword123``, ``abc123XYZ``): with those words taken out, at
    most a few letters, digits and symbols are left. A generated key or a passphrase is not."""
    rest = _EXAMPLE_WORDS.sub("", value)
    if rest == value:
        return False
    return sum(c.isalpha() for c in rest) <= 4 and len(rest) <= 8


SECRETS = (
    _secret(
        "contains an OpenAI/Anthropic-style API key",
        r"\bsk-[A-Za-z0-9_-]{20,}",
        valid=_letters_and_digits,
    ),
    _secret("contains an AWS access key ID", r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"),
    _secret("contains a GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),
    _secret("contains a GitHub token", r"\bgithub_pat_[A-Za-z0-9_]{30,}"),
    _secret("contains a GitLab token", r"\bglpat-[A-Za-z0-9_-]{20,}"),
    _secret("contains a Slack token", r"\bxox[abprs]-(?:[0-9]+-)+[A-Za-z0-9-]{8,}"),
    _secret("contains a Stripe secret key", r"\b[rs]k_live_[A-Za-z0-9]{20,}"),
    _secret("contains a Telegram bot token", r"\b[0-9]{8,10}:AA[A-Za-z0-9_-]{33,}",
            valid=lambda m: len(m[0].partition(":")[2]) == 35 and _not_placeholder(m)),
    _secret("contains a Google API key", r"\bAIza[0-9A-Za-z_-]{35,}", valid=_exactly(39)),
    _secret(
        "contains a JSON Web Token",
        r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
    ),
    _secret("contains a private key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----", keep=-1),
    _secret(  # last: only consulted when no known format matched
        "contains a password or API key value",
        r"(?i:\b[a-z0-9_.-]*(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey"
        r"|access[_-]?key|private[_-]?key|auth[_-]?key|credentials?))[\"']?\s*[:=]\s*[\"']?"
        r"(?P<value>[^\s\"'`,;]{8,})",
        valid=_secret_value,
    ),
)


def mask_secrets(fragment: str) -> str:
    """Replace anything that looks like a credential with a short masked form."""
    for secret in SECRETS:
        value = secret.loose.groupindex.get("value")
        fragment = secret.loose.sub(partial(_mask, keep=secret.keep, value=value), fragment)
    return LONG_TOKEN.sub(_mask_random, fragment)


def _mask(match: Match, keep: int, value: int | None) -> str:
    if value is not None:  # the number of the group holding the secret's value
        if "****" in match[value]:
            return cast("str", match[0])
        return cast("str", match[0][: match.start(value) - match.start()] + "****")
    return cast("str", match[0] if keep < 0 else match[0][:keep] + "****")


def _mask_random(match: Match) -> str:
    pre, token = match["pre"], match["token"]
    if token.count("/") > len(token) // 8 or not looks_random(token, 3.5):
        return cast("str", match[0])
    return cast("str", pre + token[:4] + "****")


def looks_random(value: str, bits: float) -> bool:
    classes = sum(any(test(c) for c in value) for test in (str.islower, str.isupper, str.isdigit))
    counts = Counter(value).values()
    entropy = -sum(n / len(value) * math.log2(n / len(value)) for n in counts)
    return classes >= 2 and entropy >= bits
