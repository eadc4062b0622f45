"""``iris_tools``: the module an ``execute_code`` script imports inside the sandbox.

This file is copied, as it is, into each run's directory in the sandbox; it uses the standard
library only. Every function sends one request to the turn that started the script and waits
for its answer; the turn runs the tool exactly as if the model had called it (same checks, same
user, same approvals). A failed call raises ``ToolError`` with the tool's message.

The channel is a directory in the workspace named, with a per-run token, by the environment
(``IRIS_TOOLS_DIR``, ``IRIS_TOOLS_TOKEN``): a request is a JSON file renamed into ``in/``, the
answer a JSON file the turn writes into ``out/``. Without that environment the module does
not import, and once the run ends nothing answers.
"""

from __future__ import annotations

import itertools
import json
import os
import threading
import time
from typing import Any

__all__ = [
    "ToolError", "call", "patch", "read_file", "search_files", "terminal", "web_extract",
    "web_search", "write_file",
]

_DIR = os.environ.pop("IRIS_TOOLS_DIR", "")
_TOKEN = os.environ.pop("IRIS_TOOLS_TOKEN", "")
if not _DIR or not _TOKEN:
    raise ImportError("iris_tools works only inside a script run by the execute_code tool")

_ids = itertools.count(1)
_lock = threading.Lock()
_FIRST_WAIT = 0.001
_LONGEST_WAIT = 0.1


class ToolError(Exception):
    """A tool call failed, was refused, or is waiting for the user's approval."""


def call(tool: str, **args: Any) -> str:
    """Call ``tool`` with keyword arguments as the model would; returns its text output."""
    with _lock:
        number = next(_ids)
    name = f"req-{number:06d}.json"
    staged = os.path.join(_DIR, "tmp", name)
    with open(staged, "w", encoding="utf-8") as handle:
        json.dump({"token": _TOKEN, "id": number, "tool": tool, "args": args}, handle)
    os.replace(staged, os.path.join(_DIR, "in", name))
    answer = _wait(os.path.join(_DIR, "out", f"res-{number:06d}.json"))
    if answer.get("ok"):
        return str(answer.get("output", ""))
    raise ToolError(str(answer.get("error", "the call failed")))


def _wait(path: str) -> dict[str, Any]:
    """The answer once it is whole (a partly written file does not parse)."""
    pause = _FIRST_WAIT
    while True:
        try:
            with open(path, encoding="utf-8") as handle:
                answer = json.load(handle)
            if isinstance(answer, dict):
                return answer
        except (FileNotFoundError, ValueError):
            pass
        time.sleep(pause)
        pause = min(pause * 1.25, _LONGEST_WAIT)


def web_search(query: str, **options: Any) -> str:
    return call("web_search", query=query, **options)


def web_extract(urls: str | list[str], **options: Any) -> str:
    return call("web_extract", urls=[urls] if isinstance(urls, str) else list(urls), **options)


def read_file(path: str, **options: Any) -> str:
    return call("read_file", path=path, **options)


def write_file(path: str, content: str) -> str:
    return call("write_file", path=path, content=content)


def search_files(pattern: str | None = None, **options: Any) -> str:
    return call("search_files", pattern=pattern, **options)


def patch(path: str, old_string: str, new_string: str, **options: Any) -> str:
    return call("patch", path=path, old_string=old_string, new_string=new_string, **options)


def terminal(command: str, **options: Any) -> str:
    return call("terminal", command=command, **options)
