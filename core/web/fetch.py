"""Fetching one URL safely: every hop checked, the checked address connected to, bounded.

For each hop (the URL, then each redirect) the host is resolved once, every address it
resolves to is checked (``core.addresses``), and the request is sent to that checked
address with the original name in ``Host`` and TLS SNI, so a second DNS answer (rebinding)
never decides where the connection goes. Redirects are followed by hand, each re-checked.
Time covers the whole fetch, redirects included; bytes are counted as they arrive.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import httpx

from core.addresses import (
    AddressRefused,
    IPAddress,
    allowed_host,
    check_name,
    literal_address,
    refusal,
)
from core.lanes import blocking
from core.tls import tls_client

if TYPE_CHECKING:
    from core.config import Settings

Resolver = Callable[[str, int], Awaitable[list[IPAddress]]]
REDIRECTS = frozenset({301, 302, 303, 307, 308})
TEXT_TYPES = ("text/",)
OTHER_TYPES = frozenset({"application/xhtml+xml", "application/pdf"})
USER_AGENT = "Iris/0.1 (web_extract; +https://github.com/)"


class FetchFailed(Exception):
    """The URL was allowed but could not be read (status, timeout, size, type)."""


@dataclass(frozen=True)
class FetchPolicy:
    allow_hosts: frozenset[str] = frozenset()
    max_bytes: int = 5_000_000
    timeout: float = 20.0
    max_redirects: int = 5
    any_type: bool = False  # take any media type: the caller checks the bytes (images)

    @classmethod
    def from_settings(cls, settings: Settings) -> FetchPolicy:
        return cls(allow_hosts=frozenset(settings.web_allow_hosts),
                   max_bytes=settings.web_max_bytes, timeout=settings.web_timeout)


@dataclass(frozen=True)
class Fetched:
    url: str  # after redirects
    content_type: str  # media type, lower case, without parameters
    charset: str | None
    body: bytes
    truncated: bool  # the body was longer than max_bytes


@dataclass(frozen=True)
class Target:
    url: httpx.URL  # the request URL with the checked address as its host
    host_header: str
    sni: str | None


async def system_resolver(host: str, port: int) -> list[IPAddress]:
    infos = await blocking("io", f"dns:{host}", socket.getaddrinfo, host, port,
                           type=socket.SOCK_STREAM, what=f"looking up {host}")
    seen: list[IPAddress] = []
    for *_, sockaddr in infos:
        ip = literal_address(str(sockaddr[0]))
        if ip is not None and ip not in seen:
            seen.append(ip)
    return seen


def parse_url(text: str) -> httpx.URL:
    try:
        url = httpx.URL(text.strip())
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise AddressRefused(f"not a valid URL: {exc}") from None
    if url.scheme not in ("http", "https"):
        raise AddressRefused(f"only http and https URLs are fetched, not {url.scheme or 'none'}:")
    if not url.raw_host:
        raise AddressRefused("the URL has no host")
    if url.userinfo:
        raise AddressRefused("URLs carrying a user name or password are not fetched")
    return url


async def check_target(url: httpx.URL, policy: FetchPolicy, resolver: Resolver) -> Target:
    """Where to connect for ``url``, or ``AddressRefused``."""
    host = url.raw_host.decode("ascii").lower()
    port = url.port or (443 if url.scheme == "https" else 80)
    exempt = allowed_host(policy.allow_hosts, host, port)
    literal = literal_address(host)
    if literal is not None:
        addresses = [literal]
    else:
        if not exempt:
            check_name(host)
        try:
            addresses = await resolver(host, port)
        except OSError as exc:
            raise FetchFailed(f"cannot resolve {host}: {exc}") from None
        if not addresses:
            raise FetchFailed(f"{host} has no address")
    if not exempt:
        for ip in addresses:
            reason = refusal(ip)
            if reason:
                shown = host if literal is None else url.host
                raise AddressRefused(f"{shown} is {reason}" if literal is not None
                                     else f"{shown} resolves to {ip}, {reason}")
    return Target(
        url=url.copy_with(host=str(addresses[0]), port=port),
        host_header=url.netloc.decode("ascii"),
        sni=host if literal is None and url.scheme == "https" else None,
    )


def _media_type(value: str | None) -> tuple[str, str | None]:
    if not value:
        return "", None
    main, *params = (part.strip() for part in value.split(";"))
    charset = next((p.split("=", 1)[1].strip('"\' ') for p in params
                    if p.lower().startswith("charset=")), None)
    return main.lower(), charset


def _sniff(head: bytes) -> str:
    start = head.lstrip()[:512].lower()
    if start.startswith(b"%pdf-"):
        return "application/pdf"
    if start.startswith((b"<!doctype html", b"<html", b"<head", b"<body")):
        return "text/html"
    if b"\x00" not in head[:1024]:
        try:
            head[:1024].decode("utf-8")
            return "text/plain"
        except UnicodeDecodeError:
            pass
    return "application/octet-stream"


def acceptable(media: str) -> bool:
    return media.startswith(TEXT_TYPES) or media in OTHER_TYPES


async def fetch(text: str, policy: FetchPolicy, *, resolver: Resolver = system_resolver) -> Fetched:
    """Fetch ``text`` under ``policy``. Raises ``AddressRefused`` or ``FetchFailed``."""
    url = parse_url(text)
    try:
        async with asyncio.timeout(policy.timeout), tls_client(
            trust_env=False, follow_redirects=False, timeout=policy.timeout,
            # no reuse: a TLS connection is verified for one name, a redirect may name another
            limits=httpx.Limits(max_keepalive_connections=0),
            headers={"User-Agent": USER_AGENT, "Accept": "text/html, text/*, application/pdf"},
        ) as client:
            for _ in range(policy.max_redirects + 1):
                target = await check_target(url, policy, resolver)
                result = await _get(client, url, target, policy)
                if isinstance(result, Fetched):
                    return result
                url = parse_url(str(url.join(result)))
            raise FetchFailed(f"more than {policy.max_redirects} redirects")
    except TimeoutError:
        raise FetchFailed(f"no complete answer within {policy.timeout:g} s") from None
    except httpx.InvalidURL as exc:  # not an HTTPError: e.g. a redirect to ``http:\\host``
        raise FetchFailed(f"an invalid URL on the way: {exc}") from None
    except httpx.HTTPError as exc:
        raise FetchFailed(f"{type(exc).__name__}: {exc}") from None


async def _get(client: httpx.AsyncClient, url: httpx.URL, target: Target,
               policy: FetchPolicy) -> Fetched | str:
    """The page, or the ``Location`` of a redirect."""
    extensions = {"sni_hostname": target.sni} if target.sni else {}
    async with client.stream("GET", target.url, headers={"Host": target.host_header},
                             extensions=extensions) as response:
        if response.status_code in REDIRECTS:
            location = response.headers.get("location")
            if not location:
                raise FetchFailed(f"HTTP {response.status_code} without a Location")
            return cast("Fetched | str", location)
        if response.status_code >= 400:
            raise FetchFailed(f"HTTP {response.status_code} {response.reason_phrase}")
        media, charset = _media_type(response.headers.get("content-type"))
        if media and not policy.any_type and not acceptable(media):
            raise FetchFailed(f"{media} is not text, HTML or PDF")
        declared = response.headers.get("content-length", "")
        if policy.any_type and declared.isdigit() and int(declared) > policy.max_bytes:
            raise FetchFailed(f"it is {int(declared)} bytes, over the {policy.max_bytes}-byte "
                              "limit")
        if media == "application/pdf" and declared.isdigit() and \
                int(declared) > policy.max_bytes:
            raise FetchFailed(f"the PDF is {int(declared)} bytes, over the {policy.max_bytes}"
                              "-byte cap")
        body = bytearray()
        truncated = False
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > policy.max_bytes:
                del body[policy.max_bytes:]
                truncated = True
                break
        if not media and not policy.any_type:
            media = _sniff(bytes(body[:2048]))
            if not acceptable(media):
                raise FetchFailed("the answer is not text, HTML or PDF")
        return Fetched(url=str(url), content_type=media, charset=charset, body=bytes(body),
                       truncated=truncated)
