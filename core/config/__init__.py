"""Configuration: one iris.yaml plus IRIS_* environment variables, validated by pydantic.

Precedence: environment variable > .env > iris.yaml > default. Every setting ``name`` is read from
the variable ``IRIS_<NAME>`` and from the key ``name`` in iris.yaml. The ``.env`` next to iris.yaml
holds secrets (``IRIS_*`` settings, plus variables such as ``AWS_ACCESS_KEY_ID`` that
``load_settings()`` copies into ``os.environ`` unless already set). A wrong value raises
``ConfigError`` naming the setting, so the CLI can print one clear line.
"""

from core.config.loading import SETTING_NAMES, STRUCTURED, dotenv_path, env_name, load_settings
from core.config.settings import Settings

__all__ = ["SETTING_NAMES", "STRUCTURED", "Settings", "dotenv_path", "env_name", "load_settings"]
