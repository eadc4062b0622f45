"""The browser's network policy, enforced where the connection is made (standard library only;
copied beside ``driver.py`` into the user's workspace and run in their sandbox).

``check_url`` is the rule: http(s) to public addresses only, or to a host in ``allow`` (from
``IRIS_WEB_ALLOW_HOSTS``). ``Guard`` is a small HTTP proxy on loopback that Chromium is told to
send everything through (``--proxy-server``, loopback included): for each connection (a plain
request, a ``CONNECT`` tunnel for https or a WebSocket) it resolves the host ONCE, checks every
address it got, and connects to one of those same addresses. A name that answers a public
address to a check and a private one to the connection (DNS rebinding) cannot get through: there
is no second lookup.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import threading
from collections.abc import Collection
from typing import Any
from urllib.parse import urlsplit

Address = tuple[socket.AddressFamily, Any]  # a family and the sockaddr to connect to

METADATA = {"169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254"}
BAD_SUFFIXES = (".localhost", ".internal", ".local")
LOCAL_SCHEMES = {"data", "blob", "about"}
WEB_SCHEMES = {"http": 80, "https": 443, "ws": 80, "wss": 443}
HEAD_LIMIT = 64 * 1024
HOP_HEADERS = (b"connection", b"proxy-connection", b"keep-alive", b"proxy-authorization")
RESOLVE = socket.getaddrinfo  # tests put a rebinding resolver here


class Refused(Exception):
    pass


def _local_name(host: str) -> None:
    if not host or host == "localhost" or host.endswith(BAD_SUFFIXES):
        raise Refused(f"{host or 'an empty host'} is a local name")


def pinned(host: str, port: int, allow: Collection[str]) -> list[Address]:
    """The addresses ``host`` resolves to, all checked (one lookup); ``Refused`` otherwise."""
    host = host.rstrip(".").lower()
    allowed = host in allow or f"{host}:{port}" in allow
    if not allowed:
        _local_name(host)
    try:
        infos = RESOLVE(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise Refused(f"{host} does not resolve ({exc})") from None
    addresses: list[Address] = []
    for info in infos:
        addr = ipaddress.ip_address(str(info[4][0]).split("%")[0])
        mapped = getattr(addr, "ipv4_mapped", None) or addr
        if not allowed and (str(mapped) in METADATA or not mapped.is_global):
            raise Refused(f"{host} resolves to {mapped}, which is not a public address")
        addresses.append((info[0], info[4]))
    if not addresses:
        raise Refused(f"{host} does not resolve")
    return addresses


def check_url(url: str, allow: Collection[str], resolve: bool = True) -> None:
    """Raise ``Refused`` unless ``url`` may be requested. ``resolve=False``: the scheme and the
    name only (for requests that go through ``Guard``, which checks the address it connects to;
    a lookup here would be a second one, which a rebinding name could answer differently)."""
    parts = urlsplit(url)
    if parts.scheme in LOCAL_SCHEMES:
        return
    if parts.scheme not in WEB_SCHEMES:
        raise Refused(f"the scheme {parts.scheme!r} is not allowed")
    if parts.username or parts.password:
        raise Refused("URLs with a user name or password are not allowed")
    host, port = parts.hostname or "", parts.port or WEB_SCHEMES[parts.scheme]
    if resolve:
        pinned(host, port, allow)
    elif host.rstrip(".").lower() not in allow and f"{host}:{port}" not in allow:
        _local_name(host.rstrip(".").lower())


def connect(host: str, port: int, allow: Collection[str], timeout: float) -> socket.socket:
    """A socket connected to an address of ``host`` that passed the check."""
    last: OSError | None = None
    for family, sockaddr in pinned(host, port, allow):
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(sockaddr)
        except OSError as exc:
            sock.close()
            last = exc
            continue
        sock.settimeout(None)
        return sock
    raise Refused(f"{host}:{port} could not be reached ({last})")


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for sock, how in ((dst, socket.SHUT_WR), (src, socket.SHUT_RD)):
            with contextlib.suppress(OSError):
                sock.shutdown(how)


def _split_target(target: str) -> tuple[str, int]:
    """``host:port`` of a CONNECT (``[v6]:port`` too)."""
    host, _, port = target.rpartition(":")
    return host.strip("[]"), int(port)


class Guard:
    """The checking proxy; ``refused`` collects what it turned away as (host, port, why). The
    driver shows the model those of hosts the page asked for: Chromium also connects on its
    own (Google's sign-in and push services), which is no concern of the page's reader."""

    def __init__(self, allow: Collection[str], refused: list[tuple[str, int, str]],
                 timeout: float = 10.0) -> None:
        self.allow, self.refused, self.timeout = allow, refused, timeout
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port: int = self.sock.getsockname()[1]
        self.open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.open.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def close(self) -> None:
        self.sock.close()
        for conn in self.open:
            with contextlib.suppress(OSError):
                conn.close()

    def _serve(self, conn: socket.socket) -> None:
        try:
            head, rest = self._read_head(conn)
            lines = head.split(b"\r\n")
            method, target, version = lines[0].decode("latin-1").split(" ", 2)
            if method == "CONNECT":
                host, port = _split_target(target)
                shown = f"{host}:{port}"
            else:
                parts = urlsplit(target)
                if parts.scheme != "http":
                    raise Refused(f"the proxy takes only http:// requests, not {target[:80]}")
                host, port = parts.hostname or "", parts.port or 80
                shown = target
            try:
                upstream = connect(host, port, self.allow, self.timeout)
            except Refused as exc:
                self.refused.append((host.lower(), port, f"{shown[:200]}: {exc}"))
                self._deny(conn, str(exc))
                return
        except (ValueError, OSError, Refused):
            conn.close()
            return
        self.open.append(upstream)
        if method == "CONNECT":
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            kept = [h for h in lines[1:] if h and h.split(b":", 1)[0].lower() not in HOP_HEADERS]
            first = f"{method} {path} {version}".encode("latin-1")
            upstream.sendall(b"\r\n".join([first, *kept, b"Connection: close", b"", b""]))
        if rest:
            upstream.sendall(rest)
        threading.Thread(target=_pipe, args=(upstream, conn), daemon=True).start()
        _pipe(conn, upstream)

    @staticmethod
    def _read_head(conn: socket.socket) -> tuple[bytes, bytes]:
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = conn.recv(65536)
            if not chunk or len(buf) > HEAD_LIMIT:
                raise ValueError("no request head")
            buf += chunk
        head, rest = buf.split(b"\r\n\r\n", 1)
        return head, rest

    @staticmethod
    def _deny(conn: socket.socket, why: str) -> None:
        body = f"Refused by Iris' browser policy: {why}\n".encode()
        conn.sendall(
            b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\n"
            + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        conn.close()
