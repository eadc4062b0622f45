"""The ``modal`` command line as ``iris deploy`` uses it: find it, check a token, run it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from core.dotenv import write_private

WEB_URL = re.compile(r"https://[A-Za-z0-9._-]+\.modal\.run\b")


class ModalCliError(Exception):
    """The modal command failed; the message says what to do."""


def modal_executable(environ: Mapping[str, str]) -> str | None:
    """``modal`` on PATH, else the one installed next to this Python."""
    found = shutil.which("modal", path=environ.get("PATH"))
    if found:
        return found
    sibling = Path(sys.executable).with_name("modal")
    return str(sibling) if sibling.is_file() and os.access(sibling, os.X_OK) else None


def modal_token(environ: Mapping[str, str], home: Path | None = None) -> str | None:
    """Where a Modal token comes from ("environment" or "profile NAME in PATH"), or None."""
    if environ.get("MODAL_TOKEN_ID") and environ.get("MODAL_TOKEN_SECRET"):
        return "MODAL_TOKEN_ID/MODAL_TOKEN_SECRET"
    home = home or Path(environ.get("HOME") or Path.home())
    path = Path(environ.get("MODAL_CONFIG_PATH") or home / ".modal.toml")
    try:
        profiles = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return None
    wanted = environ.get("MODAL_PROFILE")
    usable = {
        name: table for name, table in profiles.items()
        if isinstance(table, dict) and table.get("token_id") and table.get("token_secret")
    }
    if wanted:
        return f"profile {wanted} in {path}" if wanted in usable else None
    active = [name for name, table in usable.items() if table.get("active")]
    if active or len(usable) == 1:
        return f"profile {(active or list(usable))[0]} in {path}"
    return None


@dataclass
class ModalCli:
    executable: str
    environ: dict[str, str]
    cwd: Path
    echo: Callable[[str], None] = print

    def run(self, *args: str, stream: bool = False) -> str:
        """Run ``modal ARGS``; returns its output (echoed line by line when ``stream``)."""
        env = {**self.environ, "COLUMNS": "400", "PYTHONUNBUFFERED": "1"}
        process = subprocess.Popen(
            [self.executable, *args], cwd=self.cwd, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
        )
        lines: list[str] = []
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if stream:
                self.echo(line.rstrip("\n"))
        code = process.wait()
        output = "".join(lines)
        if code != 0:
            command = " ".join(args[:2] if args[0] in ("secret", "app") else args[:1])
            tail = ("; its output is above" if stream
                    else ":\n" + "\n".join(output.strip().splitlines()[-15:]))
            raise ModalCliError(f"`modal {command}` failed (exit {code}){tail}")
        return output

    def create_secret(self, name: str, values: Mapping[str, str], *, replace: bool) -> None:
        """``modal secret create`` from a private temporary JSON file, so values never appear
        on a command line."""
        with tempfile.TemporaryDirectory(prefix="iris-secret-") as tmp:
            path = Path(tmp) / "secret.json"
            write_private(path, json.dumps(dict(values)))
            args = ["secret", "create", name, "--from-json", str(path)]
            self.run(*args, *(["--force"] if replace else []))

    def deploy(self, target: str, *, tag: str | None = None) -> str:
        return self.run("deploy", target, *(["--tag", tag] if tag else []), stream=True)


def web_url(output: str) -> str | None:
    """The web function's URL in ``modal deploy``'s output."""
    found = WEB_URL.search(output)
    return found.group(0) if found else None
