"""A DevTools connection to a hosted browser over WebSocket (standard library only; the driver
uses it for ``IRIS_BROWSER_CDP_URL``). Written from RFC 6455: the client's opening handshake
(§4.1, checked against ``Sec-WebSocket-Accept``), masked client frames (§5.3), fragments,
ping/pong and close (§5.4-5.5). ``http(s)://host:port`` is asked for its browser endpoint first
(``/json/version``'s ``webSocketDebuggerUrl``, as Chromium's ``--remote-debugging-port``
serves it); ``ws(s)://…`` (Browserbase's ``wss://connect.browserbase.com?apiKey=…``) is used
as given."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import socket
import ssl
import struct
from urllib.parse import urlsplit
from urllib.request import urlopen

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
MAX_MESSAGE = 64 * 1024 * 1024  # a full-page screenshot is a few MB of base64


class CdpError(Exception):
    pass


def endpoint(url: str, timeout: float) -> str:
    """The browser's WebSocket address for ``url``."""
    parts = urlsplit(url)
    if parts.scheme in ("ws", "wss"):
        return url
    if parts.scheme not in ("http", "https"):
        raise CdpError(f"a CDP endpoint is ws://, wss://, http:// or https://, not {parts.scheme}")
    with urlopen(f"{url.rstrip('/')}/json/version", timeout=timeout) as answer:
        found = json.load(answer)["webSocketDebuggerUrl"]
    if not isinstance(found, str):
        raise CdpError("the CDP endpoint's /json/version has no webSocketDebuggerUrl")
    return found


class CdpSocket:
    def __init__(self, url: str, timeout: float) -> None:
        parts = urlsplit(endpoint(url, timeout))
        secure = parts.scheme == "wss"
        host, port = parts.hostname or "", parts.port or (443 if secure else 80)
        sock = socket.create_connection((host, port), timeout=timeout)
        if secure:
            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=host)
        self.sock = sock
        key = base64.b64encode(os.urandom(16))
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        sock.sendall(
            f"GET {target} HTTP/1.1\r\nHost: {parts.netloc.rsplit('@', 1)[-1]}\r\n".encode()
            + b"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
            + b"Sec-WebSocket-Key: "
            + key
            + b"\r\n\r\n"
        )
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = sock.recv(4096)
            if not chunk or len(head) > 65536:
                raise CdpError("the CDP endpoint closed during the handshake")
            head += chunk
        head, self.buf = head.split(b"\r\n\r\n", 1)
        lines = head.split(b"\r\n")
        if b" 101 " not in lines[0] + b" ":
            raise CdpError(f"the CDP endpoint answered {lines[0][:80].decode('latin-1')}")
        accept = base64.b64encode(hashlib.sha1(key + GUID).digest())
        got = [
            v.split(b":", 1)[1].strip()
            for v in lines
            if v.lower().startswith(b"sec-websocket-accept:")
        ]
        if got != [accept]:
            raise CdpError("the CDP endpoint's handshake does not match")
        sock.settimeout(None)

    def send(self, text: str) -> None:
        self._frame(0x1, text.encode())

    def _frame(self, opcode: int, payload: bytes) -> None:
        n = len(payload)
        if n < 126:
            head = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
        elif n < 65536:
            head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
        else:
            head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(head + mask + masked)

    def _read(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = self.sock.recv(max(65536, n - len(self.buf)))
            if not chunk:
                raise EOFError
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def recv(self) -> str | None:
        """The next text message, or None when the connection ends."""
        parts: list[bytes] = []
        size = 0
        try:
            while True:
                b0, b1 = self._read(2)
                opcode, n = b0 & 0x0F, b1 & 0x7F
                if n == 126:
                    (n,) = struct.unpack("!H", self._read(2))
                elif n == 127:
                    (n,) = struct.unpack("!Q", self._read(8))
                size += n
                if size > MAX_MESSAGE:
                    raise CdpError("a CDP message over the size limit")
                mask = self._read(4) if b1 & 0x80 else None
                payload = self._read(n)
                if mask:
                    payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
                if opcode == 0x8:
                    return None
                if opcode == 0x9:
                    self._frame(0xA, payload)
                    continue
                if opcode == 0xA:
                    continue
                parts.append(payload)
                if b0 & 0x80:
                    return b"".join(parts).decode()
        except (EOFError, OSError):
            return None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._frame(0x8, b"")
        self.sock.close()
