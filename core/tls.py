"""One TLS client context per process for every outbound HTTPS client Iris makes.

``httpx.AsyncClient()`` builds a new ``ssl.SSLContext`` each time and loads the whole CA
bundle into it (~20 ms of CPU, measured in the test suite's profile): the platforms' senders
open a client per call, so every reply paid it. A context is safe to share between clients
and threads; it is built on first use, as httpx would build it (``SSL_CERT_FILE`` or
``SSL_CERT_DIR`` when set, else certifi's bundle), and built again if those change.
"""

from __future__ import annotations

import functools
import os
import ssl
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx


def tls() -> ssl.SSLContext:
    """The process's verifying client context (pass as ``verify=`` to httpx clients)."""
    return _context(os.environ.get("SSL_CERT_FILE") or None,
                    os.environ.get("SSL_CERT_DIR") or None)


def tls_client(**options: Any) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` that verifies with the process's context (``options`` are
    httpx's: ``timeout``, ``follow_redirects``, ``trust_env``, …). httpx is imported here, on
    first use, so modules on the webhook ack path can import this one for free."""
    import httpx

    return httpx.AsyncClient(verify=tls(), **options)


@functools.lru_cache(maxsize=4)
def _context(cafile: str | None, capath: str | None) -> ssl.SSLContext:
    if cafile:
        return ssl.create_default_context(cafile=cafile)
    if capath:
        return ssl.create_default_context(capath=capath)
    import certifi

    return ssl.create_default_context(cafile=certifi.where())
