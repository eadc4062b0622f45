"""Which ``Authentication-Results`` of an inbound mail to believe (RFC 8601), and what they say.

The receiving service adds its verdict (SPF, DKIM, DMARC) above everything the sender wrote,
naming itself with an authserv-id; a sender can add headers of the same name with any id and
any verdict lower down. Only the service's own count: those naming the configured authserv-id
(``IRIS_EMAIL_AUTHSERV_ID``), else the topmost header alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')
AUTHSERV_ID = re.compile(r'\s*("(?:[^"\\]|\\.)*"|[^\s;"]+)')
# ``method[/version]=result`` as a word of its own; a property (``header.d=…``) has a dot
METHOD_RESULT = re.compile(r"(?<!\S)([A-Za-z0-9][A-Za-z0-9-]*)(?:/\d+)?=([A-Za-z]+)(?!\S)")


def _uncommented(value: str) -> str:
    """``value`` without its RFC 5322 comments (nested parentheses; none inside quotes)."""
    kept: list[str] = []
    depth, quoted, escaped = 0, False, False
    for char in value:
        if escaped:
            escaped = False
            if depth == 0:
                kept.append(char)
            continue
        if char == "\\":
            escaped = True
            if depth == 0:
                kept.append(char)
        elif quoted:
            quoted = char != '"'
            kept.append(char)
        elif char == "(":
            depth += 1
        elif char == ")" and depth:
            depth -= 1
        elif depth == 0:
            quoted = char == '"'
            kept.append(char)
    return "".join(kept)


@dataclass(frozen=True)
class AuthResults:
    """One ``Authentication-Results`` header (RFC 8601 section 2.2): who wrote it and each
    method's result, e.g. ``("mx.example.net", (("spf", "pass"), ("dkim", "fail")))``."""

    authserv_id: str
    results: tuple[tuple[str, str], ...]


def parse_auth_results(value: str) -> AuthResults:
    """``authserv-id [version] ; method[/version]=result [reason] [properties] ; …``.

    Comments and quoted strings are set aside first, so a reason, a comment or a property's
    value (``header.d=``, ``smtp.mailfrom=``: words the sender chose) never reads as a result.
    Results written with spaces instead of semicolons between them are read too.
    """
    text = _uncommented(value)
    first = AUTHSERV_ID.match(text)
    authserv_id = first.group(1).strip('"').lower() if first else ""
    _version, *clauses = QUOTED.sub('""', text[first.end() if first else 0:]).split(";")
    results = tuple((method.lower(), result.lower()) for clause in clauses
                    for method, result in METHOD_RESULT.findall(clause)
                    if method.lower() != "reason")
    return AuthResults(authserv_id, results)


def trusted_results(headers: list[str], authserv_id: str | None) -> list[AuthResults] | None:
    """The headers the receiving service wrote: those naming ``authserv_id`` when it is set
    (RFC 8601 section 5: the service removes copies of its id that came with the mail), else
    the topmost one (it prepends its own above everything the sender wrote). A sender's own
    ``Authentication-Results: anything; dkim=pass`` is ignored. None: no verdict to read."""
    parsed = [parse_auth_results(value) for value in headers]
    if authserv_id is None:
        return parsed[:1] or None
    wanted = authserv_id.lower()
    return [header for header in parsed if header.authserv_id == wanted]


def auth_failure(headers: list[str], authserv_id: str | None = None) -> str | None:
    """Why the receiving service's ``Authentication-Results`` condemn the mail, or None."""
    trusted = trusted_results(headers, authserv_id)
    if trusted is None:
        return None
    if not trusted:
        return f"no Authentication-Results from {authserv_id}"
    found = [pair for header in trusted for pair in header.results]
    if any(method == "spf" and result in ("fail", "softfail") for method, result in found):
        return "SPF check failed"
    dkim = {result for method, result in found if method == "dkim"}
    if "fail" in dkim and "pass" not in dkim:  # one good signature is enough (RFC 6376 6.1)
        return "DKIM check failed"
    if ("dmarc", "fail") in found:
        return "DMARC check failed"
    return None
