"""What litellm's model table says about one model (context window, vision, price), read from
the JSON file litellm ships without importing litellm (its import costs seconds and ~130 MiB).

The file maps model names (``gpt-4o-mini``, ``ollama/llama3``, ...) to their facts; a name is
looked up as given, then without its ``provider/`` prefix, as litellm resolves ``openai/…``.
Only the one entry is decoded: the file is ~3 MB and decoding all of it costs ~20 MiB.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

TABLE_FILE = "model_prices_and_context_window_backup.json"


def table_path() -> Path | None:
    """The table in the installed litellm package (found without running its ``__init__``)."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / TABLE_FILE
    return path if path.is_file() else None


def _decode_entry(text: str, name: str) -> dict[str, Any] | None:
    found = re.search(r'^\s*' + re.escape(json.dumps(name)) + r'\s*:\s*(?=\{)', text, re.MULTILINE)
    if found is None:
        return None
    try:
        entry, _ = json.JSONDecoder().raw_decode(text, found.end())
    except ValueError:
        return None
    return entry if isinstance(entry, dict) else None


MAX_KEPT = 64  # model names whose entries this process keeps
_kept: dict[str, dict[str, Any] | None] = {}


def known(name: str) -> bool:
    """Whether ``name``'s entry (or its absence) is kept: ``entry`` then reads no file."""
    return name in _kept


def entry(name: str) -> dict[str, Any] | None:
    """The table's entry for ``name`` (then for its name without the provider), or None."""
    if name in _kept:
        return _kept[name]
    found = _read_entry(name)
    if len(_kept) < MAX_KEPT:
        _kept[name] = found
    return found


def _read_entry(name: str) -> dict[str, Any] | None:
    path = table_path()
    if path is None:
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    candidates = [name]
    if "/" in name:
        candidates.append(name.split("/", 1)[1])
    for candidate in candidates:
        found = _decode_entry(text, candidate)
        if found is not None:
            return found
    return None


def context_window(name: str) -> int | None:
    info = entry(name) or {}
    value = info.get("max_input_tokens") or info.get("max_tokens")
    return int(value) if isinstance(value, int | float) and value > 0 else None


def sees_images(name: str) -> bool:
    return bool((entry(name) or {}).get("supports_vision"))


def price(name: str, prompt_tokens: int, completion_tokens: int,
          cache_read_tokens: int = 0) -> float | None:
    """US dollars for one call's tokens at the table's prices; None when it has none. Tokens read
    from the provider's prompt cache are priced at its cache-read price where it has one."""
    info = entry(name) or {}
    prompt_rate = info.get("input_cost_per_token")
    completion_rate = info.get("output_cost_per_token")
    if not isinstance(prompt_rate, int | float) or not isinstance(completion_rate, int | float):
        return None
    cached = min(max(cache_read_tokens, 0), prompt_tokens)
    cached_rate = info.get("cache_read_input_token_cost")
    if not isinstance(cached_rate, int | float):
        cached_rate = prompt_rate
    return ((prompt_tokens - cached) * prompt_rate + cached * cached_rate
            + completion_tokens * completion_rate)
