"""Serve an ASGI app with uvicorn on a free loopback port, in a background thread."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import uvicorn

from iris_testing.waiting import wait_until


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class RunningServer:
    url: str
    port: int
    server: uvicorn.Server
    thread: threading.Thread

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def start_server(app: object, *, port: int | None = None, timeout: float = 10.0) -> RunningServer:
    # The listening socket is bound here and handed to uvicorn: no window between picking a
    # free port and binding it in which another server could take it.
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port or 0))
    port = sock.getsockname()[1]
    # Idle connections are kept longer than any client keeps them (httpx: 5 s, uvicorn's own
    # default is also 5 s): a server closing a connection just as the client reuses it fails a
    # request with ReadError at random, which tests would see as a lost send.
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", lifespan="auto", access_log=False,
        timeout_keep_alive=60,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]},
                              name=f"uvicorn-{port}", daemon=True)
    thread.start()
    def started() -> bool:
        if not thread.is_alive():
            raise RuntimeError(f"test server on port {port} stopped before it started")
        return bool(server.started)

    wait_until(started, f"the test server on port {port} to start", timeout=timeout)
    return RunningServer(url=f"http://127.0.0.1:{port}", port=port, server=server, thread=thread)


@contextmanager
def serve(app: object) -> Iterator[RunningServer]:
    running = start_server(app)
    try:
        yield running
    finally:
        running.stop()
