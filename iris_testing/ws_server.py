"""A WebSocket server for the browser's network tests, written from RFC 6455 (§4.2.2: the
server's opening handshake, ``Sec-WebSocket-Accept`` = base64(SHA-1(key + the GUID)); §5.2: an
unmasked server frame, FIN + opcode 0x1 for text). It greets each client with one text frame and
counts the connections it accepted, so a test can see that a refused socket never arrived."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import socket
import threading

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455 §1.3


class HelloSocket:
    def __init__(self, greeting: str = "hello") -> None:
        self.greeting = greeting.encode()
        self.connections = 0
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port: int = self.sock.getsockname()[1]
        self.url = f"ws://127.0.0.1:{self.port}/"
        self._conns: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            self._conns.append(conn)
            threading.Thread(target=self._greet, args=(conn,), daemon=True).start()

    def _greet(self, conn: socket.socket) -> None:
        with contextlib.suppress(OSError):
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                head += chunk
            key = next(
                line.split(b":", 1)[1].strip()
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"sec-websocket-key:")
            )
            accept = base64.b64encode(hashlib.sha1(key + GUID.encode()).digest())
            conn.sendall(
                b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n"
            )
            conn.sendall(bytes([0x81, len(self.greeting)]) + self.greeting)
            while conn.recv(4096):
                pass

    def close(self) -> None:
        self.sock.close()
        for conn in self._conns:
            with contextlib.suppress(OSError):
                conn.close()
