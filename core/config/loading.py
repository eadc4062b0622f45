"""Where settings come from: iris.yaml, the ``.env`` beside it and ``IRIS_*`` variables."""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from core.config.settings import Settings
from core.dotenv import read_dotenv
from core.errors import ConfigError

SETTING_NAMES = frozenset(Settings.model_fields) - {"home", "config_path"}
STRUCTURED = frozenset({"mcp_servers", "dangerous_command_patterns"})


def env_name(field: str) -> str:
    return f"IRIS_{field.upper()}"


def dotenv_path(config_path: Path) -> Path:
    """The ``.env`` read with a config file: the one in the same directory."""
    return config_path.parent / ".env"


def _read_yaml(path: Path) -> dict[str, Any]:
    import yaml

    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise ConfigError(str(path), f"not valid YAML{where}") from None
    except OSError as exc:
        raise ConfigError(str(path), f"cannot read: {exc.strerror}") from None
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(str(path), "must be a mapping of setting: value")
    for key in raw:
        if key not in SETTING_NAMES:
            close = difflib.get_close_matches(str(key), sorted(SETTING_NAMES), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"{path}: {key}", f"unknown setting{hint}")
    return raw


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    """Build the effective settings from the environment and iris.yaml."""
    env = os.environ if env is None else env
    home = Path(env.get("IRIS_HOME") or "~/.iris").expanduser()
    config_path = Path(env.get("IRIS_CONFIG") or home / "iris.yaml").expanduser()
    if "IRIS_CONFIG" in env and not config_path.exists():
        raise ConfigError("IRIS_CONFIG", f"file not found: {config_path}")
    values: dict[str, Any] = _read_yaml(config_path) if config_path.exists() else {}
    sources = {key: f"{config_path}: {key}" for key in values}
    env_file = dotenv_path(config_path)
    dotenv = read_dotenv(env_file)
    if env is os.environ:
        for key, value in dotenv.items():
            if not key.startswith("IRIS_"):
                os.environ.setdefault(key, value)
    for name in SETTING_NAMES:
        raw, source = env.get(env_name(name)), env_name(name)
        if raw is None or raw == "":
            raw, source = dotenv.get(env_name(name)), f"{env_file}: {env_name(name)}"
        if raw is None or raw == "":
            continue
        if name in STRUCTURED:
            try:
                values[name] = json.loads(raw)
            except json.JSONDecodeError:
                raise ConfigError(source, "must be JSON") from None
        else:
            values[name] = raw
        sources[name] = source
    values.setdefault("db_url", f"file:{home / 'iris.db'}")
    values.setdefault("objects_url", str(home / "objects"))
    try:
        return Settings(home=home, config_path=config_path, **values)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = str(error["loc"][0]) if error["loc"] else "config"
        setting = sources.get(field, env_name(field))
        message = str(error["msg"]).removeprefix("Value error, ")
        raise ConfigError(setting, message) from None
