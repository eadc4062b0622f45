"""Requests to URLs a person chose (a notifications webhook), under ``web_extract``'s address
rules (``core.addresses``): the URL is checked when it is registered and again before
every request, since DNS may answer differently later. The request goes to the address just
checked (the name in ``Host`` and TLS SNI, never resolved a second time), with no proxy taken
from the environment and no redirect followed: a 3xx is an answer like any other non-2xx.
Only the status is read; the answer's body never is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

import httpx

from core.tls import tls_client
from core.web.fetch import (
    FetchFailed,
    FetchPolicy,
    Resolver,
    check_target,
    parse_url,
    system_resolver,
)

USER_AGENT = "Iris/0.1 (notifications)"


async def check_url(text: str, policy: FetchPolicy, *,
                    resolver: Resolver = system_resolver) -> str:
    """``text`` as it will be requested, or ``AddressRefused`` / ``FetchFailed``."""
    url = parse_url(text)
    await check_target(url, policy, resolver)
    return str(url)


async def post(text: str, body: bytes, headers: Mapping[str, str], policy: FetchPolicy, *,
               resolver: Resolver = system_resolver) -> int:
    """POST ``body`` to ``text``; the answer's status. Raises ``AddressRefused`` when the URL
    now reaches a refused address (nothing is sent), ``FetchFailed`` when no answer came."""
    url = parse_url(text)
    target = await check_target(url, policy, resolver)
    extensions = {"sni_hostname": target.sni} if target.sni else {}
    try:
        async with asyncio.timeout(policy.timeout), tls_client(
            trust_env=False, follow_redirects=False, timeout=policy.timeout,
            limits=httpx.Limits(max_keepalive_connections=0),
            headers={"User-Agent": USER_AGENT},
        ) as client, client.stream(
            "POST", target.url, content=body,
            headers={**headers, "Host": target.host_header}, extensions=extensions,
        ) as response:
            return response.status_code
    except TimeoutError:
        raise FetchFailed(f"no answer within {policy.timeout:g} s") from None
    except httpx.InvalidURL as exc:  # a 3xx whose Location httpx cannot even parse
        raise FetchFailed(f"an invalid URL on the way: {exc}") from None
    except httpx.HTTPError as exc:
        raise FetchFailed(f"{type(exc).__name__}: {exc}") from None
