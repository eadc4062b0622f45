"""A fault-injecting HTTP/1.1 proxy on loopback, in front of one upstream (moto's S3 server).

Requests pass through byte for byte (each on its own upstream connection; both sides are told
``Connection: close``) unless a rule picks them::

    with fault_proxy("http://127.0.0.1:5000") as proxy:
        proxy.inject(ProxyRule("fail", status=503, times=2, match="PUT "))
        boto3.client("s3", endpoint_url=proxy.url, ...)
        proxy.counts()  # {"requests": 7, "fail": 2, ...}

Rule kinds: ``fail`` answers ``status`` with an S3-shaped XML error without forwarding (nothing
ran); ``hang_before`` holds the request without forwarding it until the client gives up (a
timeout; nothing ran); ``hang_after`` forwards it, then holds the answer until the client gives
up (it ran; the client cannot know); ``drop_before``/``drop_after`` close the connection without
an answer, before or after forwarding. ``match`` is a regular expression searched in the request
line (``PUT /bucket/key?x HTTP/1.1``); ``rate`` is the share of matching requests hit (seeded),
``times`` the most that are.

A request sent with ``Expect: 100-continue`` (botocore's PUTs) gets ``100 Continue`` at once, as
from S3, and goes upstream without the expectation.
"""

from __future__ import annotations

import asyncio
import random
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Literal

ProxyFault = Literal["fail", "hang_before", "hang_after", "drop_before", "drop_after"]

_S3_ERRORS = {
    503: ("SlowDown", "Please reduce your request rate."),
    500: ("InternalError", "We encountered an internal error. Please try again."),
}


@dataclass
class ProxyRule:
    kind: ProxyFault
    match: str = ""
    rate: float = 1.0
    times: int | None = None
    status: int = 503
    hold: float = 30.0  # the most a hang lasts if the client never gives up


@dataclass
class _Request:
    head: bytes
    body: bytes

    @property
    def line(self) -> str:
        return self.head.split(b"\r\n", 1)[0].decode("latin-1")


class FaultProxy:
    def __init__(self, upstream: str) -> None:
        match = re.fullmatch(r"http://([^:/]+):(\d+)/?", upstream)
        if match is None:
            raise ValueError(f"upstream must be http://host:port, got {upstream!r}")
        self.upstream = (match[1], int(match[2]))
        self.url = ""
        self._rules: list[tuple[ProxyRule, list[int]]] = []
        self._random = random.Random(0)
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}
        self._seen: list[tuple[str, dict[str, str], bytes]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None

    # control

    def inject(self, *rules: ProxyRule, seed: int = 0) -> None:
        """Replace the rules (none: pass everything through)."""
        with self._lock:
            self._rules = [(rule, [0]) for rule in rules]
            self._random = random.Random(seed)

    def counts(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)

    def reset(self) -> None:
        with self._lock:
            self._counts = {}
            self._seen = []

    def requests(self) -> list[tuple[str, dict[str, str], bytes]]:
        """Every request as it arrived: its line, its headers (lower-case names), its body."""
        with self._lock:
            return list(self._seen)

    def _count(self, name: str) -> None:
        with self._lock:
            self._counts[name] = self._counts.get(name, 0) + 1

    def _pick(self, line: str) -> ProxyRule | None:
        with self._lock:
            for rule, used in self._rules:
                if rule.match and re.search(rule.match, line) is None:
                    continue
                if rule.times is not None and used[0] >= rule.times:
                    continue
                if self._random.random() >= rule.rate:
                    continue
                used[0] += 1
                return rule
        return None

    # serving

    def start(self) -> None:
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            self._server = loop.run_until_complete(
                asyncio.start_server(self._client, "127.0.0.1", 0))
            port = self._server.sockets[0].getsockname()[1]
            self.url = f"http://127.0.0.1:{port}"
            ready.set()
            loop.run_forever()
            self._server.close()
            loop.run_until_complete(self._server.wait_closed())
            loop.close()

        self._thread = threading.Thread(target=run, name="fault-proxy", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("the fault proxy did not start")

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await _read_request(reader, writer)
            if request is None:
                return
            self._count("requests")
            with self._lock:
                self._seen.append((request.line, _headers(request.head), request.body))
            rule = self._pick(request.line)
            if rule is not None:
                self._count(rule.kind)
            await self._answer(request, rule, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            self._count("client_gone")
        finally:
            writer.close()
            with suppress(ConnectionError):
                await writer.wait_closed()

    async def _answer(self, request: _Request, rule: ProxyRule | None,
                      reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        kind = rule.kind if rule else None
        if kind == "drop_before":
            return
        if kind == "fail":
            assert rule is not None
            writer.write(_error(rule.status))
            await writer.drain()
            return
        if kind == "hang_before":
            assert rule is not None
            await _hold(reader, rule.hold)
            return
        answer = await self._forward(request)
        if kind == "drop_after":
            return
        if kind == "hang_after":
            assert rule is not None
            await _hold(reader, rule.hold)
            return
        writer.write(answer)
        await writer.drain()

    async def _forward(self, request: _Request) -> bytes:
        up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        try:
            up_writer.write(_with_close(request.head) + request.body)
            await up_writer.drain()
            raw = await up_reader.read()
        finally:
            up_writer.close()
            with suppress(ConnectionError):
                await up_writer.wait_closed()
        head, _, body = raw.partition(b"\r\n\r\n")
        return _with_close(head + b"\r\n\r\n") + body


async def _read_request(reader: asyncio.StreamReader,
                        writer: asyncio.StreamWriter) -> _Request | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    headers = _headers(head)
    if headers.get("expect", "").lower() == "100-continue":
        # As S3 does (RFC 9110 10.1.1): the interim answer at once, so the client sends its
        # body now rather than after its own wait for it (botocore: one second per PUT). The
        # expectation is met here, so it is not passed upstream.
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        await writer.drain()
        head = b"\r\n".join(line for line in head.split(b"\r\n")
                             if not line.lower().startswith(b"expect:"))
    headers = _headers(head)
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = b""
        while True:
            size_line = await reader.readuntil(b"\r\n")
            size = int(size_line.split(b";")[0].strip(), 16)
            chunk = await reader.readexactly(size + 2)
            body += size_line + chunk
            if size == 0:
                break
    else:
        body = await reader.readexactly(int(headers.get("content-length", "0")))
    return _Request(head, body)


def _headers(head: bytes) -> dict[str, str]:
    lines = head.decode("latin-1").split("\r\n")[1:]
    pairs = (line.split(":", 1) for line in lines if ":" in line)
    return {name.strip().lower(): value.strip() for name, value in pairs}


def _with_close(head: bytes) -> bytes:
    """The message head with ``Connection: close`` (one request per connection)."""
    lines = [line for line in head.split(b"\r\n") if line
             and not line.lower().startswith((b"connection:", b"keep-alive:"))]
    return b"\r\n".join([*lines, b"Connection: close"]) + b"\r\n\r\n"


async def _hold(reader: asyncio.StreamReader, seconds: float) -> None:
    """Wait until the client closes its side (it timed out) or ``seconds`` pass."""
    with suppress(TimeoutError, ConnectionError):
        await asyncio.wait_for(reader.read(), seconds)


def _error(status: int) -> bytes:
    code, message = _S3_ERRORS.get(status, ("ServiceUnavailable", "Service is unavailable."))
    body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
            f"<Message>{message}</Message><RequestId>FAULTPROXY</RequestId></Error>").encode()
    reason = {503: "Service Unavailable", 500: "Internal Server Error"}.get(status, "Error")
    head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/xml\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    return head + body


@contextmanager
def fault_proxy(upstream: str) -> Iterator[FaultProxy]:
    proxy = FaultProxy(upstream)
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.stop()
