"""``iris chat``: an interactive terminal chat with an Iris HTTP API (the emulator by default)."""

from __future__ import annotations

import contextlib
import itertools
import signal
import sys
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from local_dev.lineinput import LineInput

DEMO_NOTE = (
    "Note: you are talking to SmolLM2-135M, a tiny offline demo model that is often wrong.\n"
    "It cannot use tools, so tell Iris things with commands: /remember I live in Lisbon (then\n"
    "/new: the next session knows it), /memory, /forget N, /cron add every day at 9 | PROMPT.\n"
    "A real model also saves memory and schedules jobs when you just ask: set IRIS_MODEL\n"
    "(e.g. openai/gpt-4o-mini, anthropic/claude-sonnet-4-5) and IRIS_MODEL_API_KEY, or put\n"
    "them in iris.yaml, then restart."
)


START_HINT = ("is the emulator running? Start it with `iris dev` "
              "(or `iris run` to start it and chat)")
CLI_HELP = "In this terminal: /exit (or Ctrl-D) quits; Ctrl-C stops a turn that is running."
INTERRUPTED = ("(interrupted: asked Iris to stop that turn; it ends after the step it is on, "
               "and your next message runs after it)")
AWAY = "While you were away (scheduled jobs):"
ARRIVED = "Meanwhile (scheduled jobs):"
CTRL_C_AGAIN = "(press Ctrl-C again, or type /exit, to quit)"


class ChatError(Exception):
    pass


@dataclass
class ChatClient:
    url: str
    api_key: str
    user: str
    timeout: float = 900.0
    session: str | None = None
    _http: httpx.Client = field(init=False)

    def __post_init__(self) -> None:
        self._http = httpx.Client(
            base_url=self.url.rstrip("/"),
            headers={"Authorization": f"Bearer {self.api_key}", "X-Iris-Client": "terminal"},
            timeout=self.timeout,
        )

    def info(self) -> dict[str, Any]:
        try:
            response = self._http.get("/v1/models")
        except httpx.HTTPError as exc:
            raise self._unreachable(exc) from exc
        self._raise_for(response)
        return response.json()["data"][0]

    def _unreachable(self, exc: Exception) -> ChatError:
        return ChatError(f"cannot reach Iris at {self.url} ({exc}); {START_HINT}")

    def notifications(self) -> list[dict[str, Any]]:
        """Scheduled results that arrived for this user and were not read yet."""
        try:
            response = self._http.get("/v1/notifications", params={"user": self.user},
                                      timeout=30.0)
        except httpx.HTTPError as exc:
            raise self._unreachable(exc) from exc
        self._raise_for(response)
        return list(response.json()["data"])

    def mark_read(self, up_to: int) -> None:
        try:
            response = self._http.post("/v1/notifications/read",
                                       json={"user": self.user, "up_to": up_to}, timeout=30.0)
        except httpx.HTTPError as exc:
            raise self._unreachable(exc) from exc
        self._raise_for(response)

    def stop(self) -> str:
        """Ask Iris to stop this chat's running turn (``/stop``, answered at once)."""
        return self.send("/stop", timeout=30.0)

    def send(self, text: str, *, timeout: float | None = None) -> str:
        headers = {"Idempotency-Key": uuid.uuid4().hex}
        body = {"messages": [{"role": "user", "content": text}], "user": self.user}
        try:
            response = self._http.post("/v1/chat/completions", json=body, headers=headers,
                                       timeout=timeout or self.timeout)
        except httpx.ConnectError as exc:
            raise self._unreachable(exc) from exc
        except httpx.HTTPError as exc:
            raise ChatError(f"cannot reach Iris at {self.url}: {exc}") from exc
        self._raise_for(response)
        self.session = response.headers.get("x-iris-session") or self.session
        return response.json()["choices"][0]["message"]["content"]

    @staticmethod
    def _raise_for(response: httpx.Response) -> None:
        if response.status_code < 400:
            return
        try:
            message = response.json()["error"]["message"]
        except (ValueError, KeyError, TypeError):
            message = response.text[:300]
        raise ChatError(f"{response.status_code}: {message}")


class Spinner:
    """A small 'thinking' spinner on stderr while the model works (only on a terminal)."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Spinner:
        if sys.stderr.isatty():
            self._thread = threading.Thread(target=self._spin, daemon=True)
            self._thread.start()
        return self

    def _spin(self) -> None:
        for frame in itertools.cycle("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"):
            if self._stop.wait(0.1):
                break
            sys.stderr.write(f"\r{frame} thinking…")
            sys.stderr.flush()
        sys.stderr.write("\r" + " " * 14 + "\r")
        sys.stderr.flush()

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join()


def _setup_history(path: Path) -> None:
    try:
        import readline
    except ImportError:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        readline.read_history_file(path)
    readline.set_history_length(1000)
    import atexit

    atexit.register(lambda: _save_history(readline, path))


def _save_history(readline: Any, path: Path) -> None:
    with contextlib.suppress(OSError):
        readline.write_history_file(path)


def read_message(lines_in: LineInput, prompt: str = "you › ") -> str | None:
    """One message; a line ending in a backslash continues on the next line. None at EOF."""
    lines: list[str] = []
    while True:
        try:
            line = lines_in.read(prompt if not lines else "   … ")
        except EOFError:
            return None if not lines else "\n".join(lines)
        if line.endswith("\\"):
            lines.append(line[:-1])
            continue
        lines.append(line)
        return "\n".join(lines)


def show_arrived(client: ChatClient, heading: str) -> None:
    """Print the scheduled results waiting in the user's inbox, then mark them read."""
    try:
        waiting = client.notifications()
        for note in waiting:
            print(f"{heading}\n{note['text']}\n")
            heading = ""
        if waiting:
            client.mark_read(max(note["id"] for note in waiting))
    except ChatError as exc:
        print(f"(could not read your inbox: {exc})", file=sys.stderr)


def _interrupted(client: ChatClient) -> None:
    try:
        client.stop()
    except (ChatError, KeyboardInterrupt):
        print("\n(interrupted; the turn may still finish on the server, and your next message "
              "runs after it)")
        return
    print("\n" + INTERRUPTED)


def repl(client: ChatClient, history_file: Path) -> int:
    # Ctrl-C stops the running turn, even where the parent ignored SIGINT (as a script's
    # background job does, and its children inherit): installed before the banner, so the
    # banner means Ctrl-C works.
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return _repl(client, history_file)
    except KeyboardInterrupt:  # before the first prompt
        print()
        return 0


def _repl(client: ChatClient, history_file: Path) -> int:
    try:
        info = client.info()
    except ChatError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"Iris at {client.url} — model {info.get('id')} — you are {client.user!r}")
    if info.get("iris_embedded_demo"):
        print(DEMO_NOTE)
    print("Type a message. /new starts a new session, /help lists commands, /exit quits.")
    print("End a line with \\ to continue it on the next line.\n")
    show_arrived(client, AWAY)
    _setup_history(history_file)
    interrupted = False
    lines_in = LineInput()
    while True:
        try:
            text = read_message(lines_in)
        except KeyboardInterrupt:
            if interrupted:
                print()
                return 0
            interrupted = True
            print("\n" + CTRL_C_AGAIN)
            continue
        interrupted = False
        if text is None or text.strip() in ("/exit", "/quit"):
            print()
            return 0
        if not text.strip():
            continue
        try:
            with Spinner():
                reply = client.send(text)
        except KeyboardInterrupt:
            _interrupted(client)
            continue
        except ChatError as exc:
            print(f"error: {exc}", file=sys.stderr)
            continue
        if text.strip().split()[0] == "/help":
            reply = f"{reply}\n\n{CLI_HELP}"
        print(f"iris › {reply}\n")
        show_arrived(client, ARRIVED)
