"""The ``iris`` command line."""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import click

from core.config import Settings
from local_dev.clikit import friendly, settings_or_exit

DEFAULT_PORT = 8787


def _exit_on_sigterm() -> None:
    """SIGTERM unwinds like Ctrl-C, so ``finally`` blocks stop the children (uvicorn re-raises
    the signal it caught once it has shut down; the default action would skip them)."""

    def handler(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="iris-agent", prog_name="iris")
def cli() -> None:
    """Iris: a self-improving AI agent that remembers, learns skills and acts, serverless.

    \b
    Start here:
      iris run                 start the emulator and chat with it
      iris dev                 run the emulator (HTTP API on http://127.0.0.1:8787)
      iris chat -m "hello"     one message to a running emulator
      iris config show         the effective configuration, secrets masked
    """


@cli.command("dev")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=DEFAULT_PORT, show_default=True, type=int)
@click.option("--tick", default=60.0, show_default=True, help="Seconds between ticker runs.")
@friendly
def dev(host: str, port: int, tick: float) -> None:
    """Run every Iris function locally under uvicorn (the emulator).

    With no IRIS_MODEL configured it starts the embedded demo model first.

    Example: iris dev --port 8787
    """
    from local_dev.demo_prompt import demo_sections
    from local_dev.emulator import build_emulator, refuse_unisolated
    from local_dev.local_model import LocalModelServer, demo_settings, demo_toolset
    from local_dev.shutdown import serve_until_stopped

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    _exit_on_sigterm()
    settings = settings_or_exit()
    refuse_unisolated(settings)
    model_server = None
    if not settings.model:
        click.echo("No IRIS_MODEL configured: starting the embedded demo model (SmolLM2-135M)…")
        model_server = LocalModelServer.start(settings.home / "logs" / "model.log",
                                              settings.home / "models")
        settings = demo_settings(settings, model_server.api_base)
    from core.model.routing import needs_litellm

    if needs_litellm(settings):
        import threading

        from core.model.llm import load_litellm

        # litellm takes seconds to import: load it while uvicorn starts, not on the first turn.
        threading.Thread(target=load_litellm, name="warm-litellm", daemon=True).start()
    emulator = None
    try:
        emulator = build_emulator(settings)
        emulator.runtime.embedded_model = model_server is not None
        if model_server is not None:
            emulator.runtime.toolset = demo_toolset()
            emulator.runtime.sections = demo_sections()
        click.echo(f"Iris emulator on http://{host}:{port} (model {settings.model}, "
                   f"state in {settings.home})")
        base = "" if port == DEFAULT_PORT and host == "127.0.0.1" else \
            f" --base-url http://{host}:{port}"
        click.echo(f"Dashboard on http://{host}:{port}/ui/ (sign in: iris dashboard link{base})")
        serve_until_stopped(emulator.app(tick_seconds=tick), host=host, port=port,
                            seconds=settings.shutdown_seconds)
    finally:
        if emulator is not None:  # its indexing child
            emulator.runtime.close()
        if model_server is not None:
            model_server.stop()


def _client_for(settings: Settings, url: str | None, user: str | None) -> Any:
    from local_dev.chat import ChatClient
    from local_dev.devkey import dev_api_key

    key = settings.secret("api_key") or dev_api_key(settings.home)
    if user is None:
        user = re.sub(r"[^A-Za-z0-9_.@+-]", "_", os.environ.get("USER") or "me") or "me"
    return ChatClient(url=url or f"http://127.0.0.1:{DEFAULT_PORT}", api_key=key, user=user)


@cli.command("chat")
@click.option("-m", "--message", help="Send one message, print the answer and exit.")
@click.option("--url", envvar="IRIS_URL", help="Iris HTTP API base URL [default: the emulator].")
@click.option("--user", help="Who you are to Iris (the API's user field) [default: $USER].")
@friendly
def chat(message: str | None, url: str | None, user: str | None) -> None:
    """Chat with Iris in the terminal (the emulator must be running: see `iris dev`).

    Example: iris chat -m "What time is it in Tokyo?"
    """
    from local_dev.chat import ChatError, repl

    settings = settings_or_exit()
    client = _client_for(settings, url, user)
    if message is None:
        sys.exit(repl(client, settings.home / "chat_history"))
    try:
        click.echo(client.send(message))
    except ChatError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)


def _healthy(url: str) -> bool:
    import httpx

    try:
        return httpx.get(f"{url}/healthz", timeout=1.0).status_code == 200
    except httpx.HTTPError:
        return False


def _start_emulator(settings: Settings, url: str, port: int) -> subprocess.Popen[bytes]:
    from local_dev import tied

    log_path = settings.home / "logs" / "dev.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    click.echo(f"Starting the emulator on {url} (log: {log_path})…")
    with log_path.open("ab") as log:
        server = tied.spawn_tied(
            [sys.executable, "-m", "local_dev.cli", "dev", "--port", str(port)],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )
    deadline = time.monotonic() + 180
    while not _healthy(url):
        if server.poll() is not None or time.monotonic() > deadline:
            tail = log_path.read_text(errors="replace").splitlines()[-15:]
            click.echo("The emulator did not start:\n" + "\n".join(tail), err=True)
            tied.stop(server)
            sys.exit(1)
        time.sleep(0.3)
    return server


@cli.command("run")
@click.option("--port", default=DEFAULT_PORT, show_default=True, type=int)
@friendly
def run(port: int) -> None:
    """Start the emulator in the background and open a chat with it (what `make run` does).

    The emulator's log goes to $IRIS_HOME/logs/dev.log; it stops when the chat ends.
    """
    from local_dev import tied
    from local_dev.chat import repl

    _exit_on_sigterm()
    settings = settings_or_exit()
    url = f"http://127.0.0.1:{port}"
    server = None
    try:
        if not _healthy(url):
            server = _start_emulator(settings, url, port)
        code = repl(_client_for(settings, url, None), settings.home / "chat_history")
    finally:
        if server is not None:
            tied.stop(server, grace=15)
    sys.exit(code)


@cli.group("config")
def config_group() -> None:
    """Inspect the configuration (iris.yaml + IRIS_* environment variables)."""


DEMO_API_BASE = "http://127.0.0.1:<free port>/v1"


@config_group.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def config_show(as_json: bool) -> None:
    """Print the effective configuration with secrets masked.

    Example: IRIS_MODEL=openai/gpt-4o-mini iris config show
    """
    from local_dev.emulator import local_owner
    from local_dev.local_model import MODEL_NAME, demo_settings

    settings = settings_or_exit()
    configured = settings.masked()
    # What `iris dev` runs with: its owner, and the demo's values when no model is set (the
    # model server's address is chosen when it starts).
    running = local_owner(settings)
    if settings.model is None:
        running = demo_settings(running, DEMO_API_BASE)
    values = running.masked()
    if as_json:
        click.echo(json.dumps(values, indent=2, default=str))
        return
    exists = settings.config_path and Path(settings.config_path).exists()
    click.echo(f"# config file: {settings.config_path}{'' if exists else ' (not present)'}")
    click.echo("# the values `iris dev` runs with; '(set by iris dev …)' marks those it sets")
    for name, value in values.items():
        if name == "config_path":
            continue
        shown = "(not set)" if value is None or value == {} else value
        if name == "model" and settings.model is None:
            shown = (f"{MODEL_NAME} (set by iris dev: not configured, so the embedded demo "
                     "model answers, SmolLM2-135M on this machine)")
        elif name == "api_key" and value is None:
            shown = "(not set: iris dev generates one into $IRIS_HOME/dev-api-key)"
        elif name == "admin_api_key" and value is None:
            shown = "(not set: the admin and search APIs under /api/ answer 503)"
        elif value != configured[name]:
            was = configured[name]
            shown = (f"{shown} (set by iris dev; configured: "
                     f"{'not set' if was in (None, {}, []) else was})")
        click.echo(f"{name}: {shown}")


@config_group.command("has-model", hidden=True)
def config_has_model() -> None:
    """Exit 0 when a model is configured (used by `make run`)."""
    sys.exit(0 if settings_or_exit().model else 1)


def _add_discovered() -> None:
    from local_dev.commands import discover

    for command in discover():
        cli.add_command(command)


_add_discovered()


def main() -> None:
    cli(prog_name="iris")


if __name__ == "__main__":
    main()
