"""``.env`` files: ``KEY=value`` lines holding secrets next to iris.yaml.

Reading never touches ``os.environ``; ``load_settings`` decides what to do with the values.
Writing keeps every line it does not change (comments, order, other keys) and leaves the file
readable by its owner only.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path

from core.errors import ConfigError

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PLAIN = re.compile(r"[A-Za-z0-9_./:@+=,%-]*")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "$": "$"}


def _split(line: str) -> tuple[str, str] | None:
    text = line.strip()
    if not text or text.startswith("#"):
        return None
    if text.startswith("export "):
        text = text[len("export "):].lstrip()
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not _KEY.fullmatch(key):
        raise ValueError("expected KEY=value")
    return key, value.strip()


def _unquote(raw: str) -> str:
    if raw[:1] == "'":
        end = raw.find("'", 1)
        if end < 0:
            raise ValueError("unterminated single quote")
        return raw[1:end]
    if raw[:1] == '"':
        out: list[str] = []
        i = 1
        while i < len(raw):
            ch = raw[i]
            if ch == "\\" and i + 1 < len(raw):
                nxt = raw[i + 1]
                out.append(_ESCAPES.get(nxt, "\\" + nxt))
                i += 2
                continue
            if ch == '"':
                return "".join(out)
            out.append(ch)
            i += 1
        raise ValueError("unterminated double quote")
    value, _, _ = raw.partition(" #")
    return value.strip()


def parse_dotenv(text: str, source: str = ".env") -> dict[str, str]:
    """Parse ``.env`` text; a malformed line raises ConfigError naming its line number."""
    values: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            pair = _split(line)
            if pair is not None:
                values[pair[0]] = _unquote(pair[1])
        except ValueError as exc:
            raise ConfigError(f"{source}: line {number}", str(exc)) from None
    return values


def read_dotenv(path: Path) -> dict[str, str]:
    """The values of ``path``; an absent file is empty."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(str(path), f"cannot read: {exc.strerror}") from None
    return parse_dotenv(text, str(path))


def format_value(value: str) -> str:
    if _PLAIN.fullmatch(value):
        return value
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
    escaped = escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return f'"{escaped}"'


def update_dotenv(path: Path, updates: Mapping[str, str]) -> bool:
    """Set ``updates`` in ``path`` (created with mode 0600), keeping every other line as it is.
    Returns False when the file already held exactly these values."""
    for key in updates:
        if not _KEY.fullmatch(key):
            raise ValueError(f"not a valid variable name: {key!r}")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = []
    current = parse_dotenv("\n".join(lines), str(path))
    if all(current.get(key) == value for key, value in updates.items()):
        return False
    pending = dict(updates)
    out: list[str] = []
    for line in lines:
        pair = _split(line)
        name = pair[0] if pair is not None else None
        if name is None or name not in updates:
            out.append(line)
        elif name in pending:
            out.append(f"{name}={format_value(pending.pop(name))}")
    out.extend(f"{key}={format_value(value)}" for key, value in pending.items())
    write_private(path, "\n".join(out) + "\n")
    return True


def write_private(path: Path, text: str) -> None:
    """Replace ``path`` atomically with ``text``, readable and writable by its owner only."""
    from core.private import private_dir

    private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
