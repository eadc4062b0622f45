"""The test servers (iris_testing/server.py): Nagle off on every connection, and a stop that
does not wait for uvicorn's ticks."""

from __future__ import annotations

import socket

import httpx

from iris_testing.server import start_server


async def _app(scope, receive, send):  # an ASGI app that writes its head and body apart
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


def test_connections_are_tcp_so_asyncio_turns_nagle_off():
    # asyncio sets TCP_NODELAY on an accepted socket only when its protocol is IPPROTO_TCP
    # (asyncio.base_events._set_nodelay); a listening socket made with proto 0 gave every
    # response written in two parts a 40 ms wait for the client's delayed ACK.
    running = start_server(_app)
    try:
        listening = [sock for server in running.server.servers for sock in server.sockets]
        assert listening and all(sock.proto == socket.IPPROTO_TCP for sock in listening)
        assert httpx.get(running.url).text == "ok"
    finally:
        running.stop()
    assert not running.thread.is_alive()
