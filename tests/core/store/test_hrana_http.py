"""The Hrana client's HTTP (core/store/hrana_http.py) against a raw socket server that behaves as
HTTP/1.1 servers do (RFC 9112 §9: a server may close an idle persistent connection at any
time; hyper, under sqld, does so after its keep-alive timeout): whether a failed request may
have run is told apart, and an idle close is never taken for a lost request."""

from __future__ import annotations

import socket
import threading

import pytest

from core.store.hrana_http import Connections, NotSent, Unanswered
from iris_testing.waiting import wait_for_event

ANSWER = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")


def _read_request(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        body += conn.recv(65536)
    return head


class RawServer:
    """Accepts connections; ``script`` says what to do with each request, in order:
    "answer", "answer-then-close" (an idle close after the answer), "close" (read, then close
    without answering)."""

    def __init__(self, script: list[str]) -> None:
        self.script = list(script)
        self.connections = 0
        self.requests: list[bytes] = []
        self.closed_idle = threading.Event()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v3/pipeline"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while self.script:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                while self.script:
                    head = _read_request(conn)
                    if not head:
                        break
                    self.requests.append(head)
                    step = self.script.pop(0)
                    if step == "close":
                        break
                    conn.sendall(ANSWER)
                    if step == "answer-then-close":
                        conn.shutdown(socket.SHUT_RDWR)
                        self.closed_idle.set()
                        break

    def stop(self) -> None:
        self.sock.close()


def test_a_kept_alive_connection_is_reused():
    server = RawServer(["answer", "answer", "answer"])
    http = Connections(timeout=10, headers={"Authorization": "Bearer t"})
    for _ in range(3):
        answer = http.post(server.url, b"{}")
        assert (answer.status, answer.content_type, answer.body) == (
            200, "application/json", b"{}")
    assert server.connections == 1
    assert b"authorization: bearer t" in server.requests[0].lower()
    http.close()
    server.stop()


def test_an_idle_close_by_the_server_is_not_a_lost_request():
    server = RawServer(["answer-then-close", "answer"])
    http = Connections(timeout=10, headers={})
    assert http.post(server.url, b"{}").status == 200
    wait_for_event(server.closed_idle, "the server to close the idle connection")
    assert http.post(server.url, b"{}").status == 200  # a new connection, nothing raised
    assert server.connections == 2
    http.close()
    server.stop()


def test_a_request_read_and_never_answered_may_have_run():
    server = RawServer(["close"])
    http = Connections(timeout=10, headers={})
    with pytest.raises(Unanswered):
        http.post(server.url, b"{}")
    assert len(server.requests) == 1
    server.stop()


def test_a_refused_connection_was_not_sent():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    with pytest.raises(NotSent):
        Connections(timeout=10, headers={}).post(f"http://127.0.0.1:{port}/v3/pipeline", b"{}")


def test_an_answer_that_never_comes_times_out_as_unanswered():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)  # accepted by the kernel, never read nor answered
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/v3/pipeline"
    with pytest.raises(Unanswered):
        Connections(timeout=0.2, headers={}).post(url, b"{}")
    listener.close()


def test_only_http_urls():
    with pytest.raises(ValueError):
        Connections(timeout=1, headers={}).post("ftp://example.com/x", b"")
