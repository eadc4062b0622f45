"""Serve an ASGI app with uvicorn on a free loopback port, in a background thread."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import uvicorn

from iris_testing.waiting import WaitTimeout, until, wait_until


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


SHUTDOWN_GRACE = 10.0  # seconds open responses and background tasks get before they are cancelled


class _Server(uvicorn.Server):
    """uvicorn's server, told to stop by an event instead of noticing it on its next 0.1 s tick,
    and shut down without uvicorn's fixed 0.1 s pause and 0.1 s polls (uvicorn 0.54's
    ``Server.main_loop``/``shutdown``): a test stops a dozen servers, and ~0.2 s each added
    up to a tenth of the suite. The order of the shutdown is uvicorn's: stop listening, ask
    each connection to finish, wait for them and the background tasks, then the lifespan's
    shutdown."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None

    def request_stop(self) -> None:
        """From any thread: the server stops now (a server not yet in its main loop stops on
        entering it)."""
        self.should_exit = True
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None:
            with contextlib.suppress(RuntimeError):  # its loop already closed
                loop.call_soon_threadsafe(wake.set)

    async def main_loop(self) -> None:
        self._loop, self._wake = asyncio.get_running_loop(), asyncio.Event()
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), 0.1)
            should_exit = await self.on_tick(counter)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        state = self.server_state
        with contextlib.suppress(WaitTimeout):
            await until(lambda: not (state.connections or state.tasks),
                        "the test server's connections and tasks to end", timeout=SHUTDOWN_GRACE)
        for task in state.tasks:
            task.cancel(msg="test server stopped")
        for server in self.servers:
            await server.wait_closed()
        await self.lifespan.shutdown()


@dataclass
class RunningServer:
    url: str
    port: int
    server: _Server
    thread: threading.Thread

    def request_stop(self) -> None:
        self.server.request_stop()

    def stop(self) -> None:
        self.request_stop()
        self.thread.join(timeout=10)


def start_server(
    app: Callable[..., Any], *, port: int | None = None, timeout: float = 10.0
) -> RunningServer:
    # The listening socket is bound here and handed to uvicorn: no window between picking a
    # free port and binding it in which another server could take it.
    # IPPROTO_TCP named: asyncio turns Nagle off (TCP_NODELAY) only on accepted sockets whose
    # protocol says TCP, and ``socket.socket()`` says 0. With Nagle on, a response written in
    # two parts (head, then body) waited for the client's delayed ACK: ~40 ms per request.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
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
    server = _Server(config)
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
def serve(app: Callable[..., Any]) -> Iterator[RunningServer]:
    running = start_server(app)
    try:
        yield running
    finally:
        running.stop()
