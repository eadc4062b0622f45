"""The HTTP under the Hrana client: one kept-alive HTTP/1.1 connection per origin, per link.

Every database call of a turn is a round trip, and over a remote database the process spent
more of its CPU in the HTTP client than in the turn (issue 30: ``httpx.Client.post`` was ~40%
of the samples holding the GIL with 50 users at once; ~1.1 ms of CPU per request against
~0.2 ms for ``http.client``). A link (``core.store.remote.RemoteLink``) serves one thread at a
time, so its connections need no pool and no lock.

What the Hrana client needs from a failure is whether the request may have run:

- ``NotSent``: the connection could not be made (refused, DNS, connect timeout, TLS
  handshake): nothing was sent.
- ``Unanswered``: the request was (or may have been) sent and no complete answer came back (a
  reset, a timeout, a truncated body): it may or may not have run.

A kept-alive connection the server has closed since its last answer (an idle timeout) shows
as readable before the next request; it is closed and a new one made instead of sending into
it, as httpcore does, so an idle close is never mistaken for a lost request.
"""

from __future__ import annotations

import http.client
import select
import socket
import ssl
from dataclasses import dataclass
from urllib.parse import urlsplit

CONNECT_TIMEOUT = 10.0


class NotSent(Exception):
    """No connection: the request was not sent."""


class Unanswered(Exception):
    """The request was sent (or may have been) and no complete answer came back."""


@dataclass(frozen=True)
class Answer:
    status: int
    content_type: str
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


def _idle_closed(sock: socket.socket) -> bool:
    """Whether a kept-alive connection has something to read before a request was sent:
    the server's close (EOF) or bytes nobody asked for; either way it is not reusable."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


class Connections:
    """Kept-alive connections by origin (``scheme://host:port``) for one caller at a time."""

    def __init__(self, *, timeout: float, headers: dict[str, str]) -> None:
        self._timeout = timeout
        self._headers = {"Content-Type": "application/json", "Accept": "application/json",
                         "User-Agent": "iris-hrana", **headers}
        self._open: dict[tuple[str, str, int], http.client.HTTPConnection] = {}

    def _connection(self, scheme: str, host: str, port: int) -> http.client.HTTPConnection:
        key = (scheme, host, port)
        conn = self._open.get(key)
        if conn is not None and (conn.sock is None or _idle_closed(conn.sock)):
            conn.close()
            conn = None
        if conn is None:
            if scheme == "https":
                from core.tls import tls

                conn = http.client.HTTPSConnection(host, port, timeout=CONNECT_TIMEOUT,
                                                   context=tls())
            else:
                conn = http.client.HTTPConnection(host, port, timeout=CONNECT_TIMEOUT)
            try:
                conn.connect()
            except (OSError, ssl.SSLError) as exc:  # refused, DNS, timeout, handshake
                conn.close()
                raise NotSent(f"{type(exc).__name__}: {exc}") from exc
            assert conn.sock is not None
            conn.sock.settimeout(self._timeout)
            self._open[key] = conn
        return conn

    def post(self, url: str, body: bytes) -> Answer:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        port = parts.port or (443 if scheme == "https" else 80)
        conn = self._connection(scheme, parts.hostname, port)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        try:
            conn.request("POST", path, body=body, headers=self._headers)
            response = conn.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as exc:  # timeouts are OSErrors
            self._drop(scheme, parts.hostname, port)
            raise Unanswered(f"{type(exc).__name__}: {exc}") from exc
        if response.will_close:
            self._drop(scheme, parts.hostname, port)
        return Answer(response.status, response.getheader("Content-Type") or "", data)

    def _drop(self, scheme: str, host: str, port: int) -> None:
        conn = self._open.pop((scheme, host, port), None)
        if conn is not None:
            conn.close()

    def close(self) -> None:
        for conn in self._open.values():
            conn.close()
        self._open.clear()
