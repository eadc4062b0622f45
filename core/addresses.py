"""Which addresses a fetched URL may reach: the server-side request forgery rules.

A URL from the model (or a page, or a redirect) must not make Iris reach its own host, its
private network or a cloud metadata service. The rule is applied to the addresses a name
*resolves to*, never to its spelling alone, and IPv4 addresses hidden inside IPv6 ones
(``::ffff:127.0.0.1``, NAT64, 6to4, IPv4-compatible) are checked as the IPv4 they carry.
Numeric spellings that the C library accepts (``2130706433``, ``0177.0.0.1``, ``0x7f.1``) are
parsed the same way ``inet_aton`` does, so they cannot slip past as "names".
"""

from __future__ import annotations

import ipaddress
import re

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Names that reach metadata services or this host whatever DNS says.
BLOCKED_NAMES = frozenset({
    "localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback",
    "metadata", "metadata.google.internal", "metadata.goog", "instance-data",
    "instance-data.ec2.internal",
})
BLOCKED_SUFFIXES = (".localhost", ".internal", ".local")
METADATA = frozenset({
    ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("169.254.170.2"),
    ipaddress.ip_address("100.100.100.200"), ipaddress.ip_address("fd00:ec2::254"),
})
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
_NUMERIC_PART = re.compile(r"^(0[xX][0-9a-fA-F]*|0[0-7]*|[1-9][0-9]*)$")


class AddressRefused(Exception):
    """The URL would reach a place Iris does not fetch from; the message says why."""


def parse_allow_entry(entry: str) -> str:
    """``host`` or ``host:port`` (``[v6]:port`` for IPv6), normalised to lower case."""
    text = entry.strip().lower().rstrip(".")
    if not text or "/" in text or "@" in text or " " in text:
        raise ValueError(f"{entry!r} is not host or host:port")
    host, port = split_host_port(text)
    if port is not None and not 0 < port < 65536:
        raise ValueError(f"{entry!r}: port out of range")
    return f"{host}:{port}" if port is not None else host


def split_host_port(text: str) -> tuple[str, int | None]:
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") and rest[1:].isdigit() else None
    if text.count(":") == 1:
        host, port = text.split(":")
        if not port.isdigit():
            raise ValueError(f"{text!r}: the port is not a number")
        return host, int(port)
    return text, None


def allowed_host(allow: frozenset[str], host: str, port: int) -> bool:
    name = host.lower().rstrip(".")
    return name in allow or f"{name}:{port}" in allow


def inet_aton(text: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address ``text`` spells in any form the C library accepts, else None.

    ``a.b.c.d``, ``a.b.c`` (c is 16 bits), ``a.b`` (b is 24 bits), ``a`` (32 bits); each part
    decimal, octal (leading 0) or hexadecimal (0x).
    """
    parts = text.split(".")
    if not 1 <= len(parts) <= 4 or not all(_NUMERIC_PART.match(p) for p in parts):
        return None
    values = []
    for part in parts:
        if part[:2].lower() == "0x":
            values.append(int(part[2:] or "0", 16))
        elif part.startswith("0") and len(part) > 1:
            values.append(int(part, 8))
        else:
            values.append(int(part))
    *head, last = values
    if any(v > 255 for v in head) or last >= 1 << (8 * (5 - len(values))):
        return None
    number = 0
    for value in head:
        number = number << 8 | value
    number = number << (8 * (5 - len(values))) | last
    return ipaddress.IPv4Address(number)


def literal_address(host: str) -> IPAddress | None:
    """The address a URL host spells literally (IPv6 without brackets), else None."""
    text = host.strip("[]")
    if "%" in text:  # a zone id: only meaningful for link-local addresses
        text = text.split("%", 1)[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return inet_aton(text)


def embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4)."""
    if isinstance(ip, ipaddress.IPv4Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64 or ip in _NAT64_LOCAL:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if int(ip) >> 32 == 0 and int(ip) > 1:  # ::a.b.c.d, the deprecated compatible form
        return ipaddress.IPv4Address(int(ip))
    if ip.teredo is not None:
        return ip.teredo[1]
    return None


def refusal(ip: IPAddress) -> str | None:
    """Why ``ip`` may not be reached, or None when it is a public address."""
    inner = embedded_ipv4(ip)
    if inner is not None:
        reason = refusal(inner)
        return f"{reason}, {inner}, carried in IPv6" if reason else None
    if ip in METADATA:
        return "a cloud metadata address"
    for test, what in (
        (ip.is_loopback, "a loopback address"), (ip.is_link_local, "a link-local address"),
        (ip.is_multicast, "a multicast address"), (ip.is_unspecified, "the unspecified address"),
        (ip.is_private, "a private address"), (ip.is_reserved, "a reserved address"),
    ):
        if test:
            return what
    if not ip.is_global:
        return "not a public address"
    return None


def check_name(host: str) -> None:
    """Refuse names that point at this host or a metadata service whatever DNS answers."""
    name = host.lower().rstrip(".")
    if name in BLOCKED_NAMES or name.endswith(BLOCKED_SUFFIXES):
        raise AddressRefused(f"{host} is a local or metadata name")
