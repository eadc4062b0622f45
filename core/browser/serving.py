"""A browser kept for a turn (standard library only; copied beside ``driver.py`` and run in the
user's sandbox).

``driver.py --serve`` (its settings as JSON on stdin) listens on a Unix socket in the workspace
(``.iris/browser/ctl.sock``) and performs each action it is sent on one Chromium, started at the
first and kept with its page open, until it is told to quit, has had no action for ``idle``
seconds, or is killed with its sandbox command. ``driver.py --ask`` (one action as JSON on stdin)
sends the action there and prints the answer; with no server listening it waits up to
``wait_server`` seconds for one, and with none asked for (0) runs the action with a browser of
its own (``driver.run``). A socket path rather than a port: it needs no network, is reached by
the user's own sandbox only, and is the same file for every command run there.

What a browser may reach, which executable, its memory, the files: all fixed by the server's
settings. An action brings only its name, arguments and time limit.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
from types import ModuleType
from typing import Any

Json = dict[str, Any]
MAX_COMMAND = 1 << 20  # one action as JSON (a text to type, a key, a ref)
MAX_ANSWER = 64 << 20  # a snapshot's lines, the console, the refused requests
READ_SECONDS = 10.0  # for a client to send its action once connected
ACTION_KEYS = ("action", "args", "timeout")


def command_line(mode: str, driver: ModuleType) -> None:
    """``driver.py --serve`` or ``--ask``; ``driver`` is the driver's module."""
    cmd = json.loads(sys.stdin.read())
    if mode == "--serve":
        serve(cmd, driver)
    elif mode == "--ask":
        print(json.dumps(ask(cmd, driver)))
    else:
        raise SystemExit(f"unknown mode {mode}")


def ask(cmd: Json, driver: ModuleType) -> Json:
    """The answer to ``cmd`` from the server on ``cmd['socket']``; without one, see above."""
    wait = float(cmd.get("wait_server") or 0)
    end = time.monotonic() + wait
    while True:
        conn = connect(cmd["socket"])
        if conn is not None:
            break
        if time.monotonic() >= end:
            if cmd["action"] == "quit":
                return {"ok": True}  # nothing is running: nothing to end
            if wait:
                return {"ok": False, "no_server": True,
                        "error": f"the browser did not start within {wait:g} s"}
            answer: Json = driver.run(cmd)
            return answer
        time.sleep(0.05)
    with conn:
        conn.settimeout(float(cmd.get("timeout", 30)) + 15)
        conn.sendall(json.dumps({k: cmd[k] for k in ACTION_KEYS if k in cmd}).encode() + b"\n")
        conn.shutdown(socket.SHUT_WR)
        raw = read_all(conn, MAX_ANSWER)
    if not raw:
        return {"ok": False, "error": "the browser ended unexpectedly"}
    answer = json.loads(raw)
    return answer


def connect(path: str) -> socket.socket | None:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
    except OSError:  # no file yet, or a file left by a server that was killed
        conn.close()
        return None
    return conn


def read_all(conn: socket.socket, cap: int) -> bytes:
    chunks, size = [], 0
    while chunk := conn.recv(65536):
        size += len(chunk)
        if size > cap:
            raise ValueError(f"more than {cap} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def listen(path: str) -> socket.socket | None:
    """A socket listening on ``path``, or None when a live server already does."""
    live = connect(path)
    if live is not None:
        live.close()
        return None
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)  # left by a server that was killed
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o077)
    try:
        sock.bind(path)
    finally:
        os.umask(old)
    sock.listen(4)
    return sock


def serve(settings: Json, driver: ModuleType) -> None:
    """Serve actions until told to quit or idle for ``settings['idle']`` seconds."""
    sock = listen(settings["socket"])
    if sock is None:
        print(json.dumps({"ok": True, "already": True}))
        return
    state = driver.load_state(settings["state"])
    b: Any = None
    served = 0
    try:
        while True:
            sock.settimeout(float(settings["idle"]))
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                break
            with conn:
                action = received(conn)
                if action is None:
                    continue
                if action.get("action") == "quit":
                    reply(conn, {"ok": True})
                    break
                cmd = {**settings, **{k: action[k] for k in ACTION_KEYS if k in action}}
                if b is not None and not b.alive():  # Chromium died since the last action
                    b.close()
                    b = None
                started = b is None
                if started:
                    try:
                        b = driver.Browser(cmd)
                    except Exception as exc:  # it did not start (a downloads folder that
                        # leaves the workspace, no Chromium): said, and the next action tries again
                        reply(conn, driver.failed(exc, None, cmd))
                        continue
                try:
                    out = driver.perform(b, cmd, state)
                except Exception as exc:  # a fault of this action's, not a reason to end
                    out = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
                    b.showing = None
                out["warm"] = not started
                served += 1
                driver.save_state(settings["state"], state)
                if not b.alive():  # past its memory, or it crashed: the next action starts one
                    b.close()
                    b = None
                reply(conn, out)
    finally:
        if b is not None:
            b.close()
        sock.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(settings["socket"])
        reap()
    print(json.dumps({"ok": True, "served": served}))


def received(conn: socket.socket) -> Json | None:
    """The action a client sent (one JSON object), or None for anything else."""
    conn.settimeout(READ_SECONDS)
    try:
        raw = read_all(conn, MAX_COMMAND)
        action = json.loads(raw)
    except (OSError, ValueError):
        return None
    if not isinstance(action, dict) or not isinstance(action.get("action"), str):
        return None
    return action


def reply(conn: socket.socket, answer: Json) -> None:
    with contextlib.suppress(OSError):  # the client was killed (a /stop): nobody to tell
        conn.sendall(json.dumps(answer).encode())


def reap() -> None:
    """Collect processes Chromium left to this one (the driver is their subreaper)."""
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
