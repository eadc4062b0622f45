"""The emulator on loopback, talking to a scripted model server through litellm: the setup every
end-to-end test shares."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import openai
import pytest

from core.config import load_settings
from functions.runtime import Runtime
from iris_testing.llm_server import ScriptedLLM
from iris_testing.server import serve
from local_dev.emulator import Emulator, build_emulator

API_KEY = "iris-test-key"
ADMIN_KEY = "iris-admin-key"


def scripted_env(model_url: str, **extra: str) -> dict[str, str]:
    """IRIS_* settings for a scripted model server at ``model_url`` (no retries by default)."""
    return {
        "IRIS_MODEL": "openai/scripted-model",
        "IRIS_MODEL_API_BASE": f"{model_url}/v1",
        "IRIS_MODEL_API_KEY": "sk-scripted",
        "IRIS_API_KEY": API_KEY,
        "IRIS_ADMIN_API_KEY": ADMIN_KEY,
        "IRIS_MODEL_RETRIES": "0",
        **extra,
    }


@dataclass
class Stack:
    url: str
    runtime: Runtime
    client: openai.OpenAI
    env: dict[str, str]
    emulator: Emulator


@contextmanager
def emulator_stack(
    llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch, *, tick_seconds: float = 3600.0,
    **extra_env: Any,
) -> Iterator[Stack]:
    """Serve ``llm`` and the emulator (configured for it) on loopback ports."""
    with serve(llm.app) as model:
        env = scripted_env(model.url, **{k: str(v) for k, v in extra_env.items()})
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        emulator = build_emulator(load_settings())
        with serve(emulator.app(tick_seconds=tick_seconds)) as iris:
            client = openai.OpenAI(base_url=f"{iris.url}/v1", api_key=API_KEY, max_retries=0,
                                   timeout=60)
            yield Stack(url=iris.url, runtime=emulator.runtime, client=client, env=env,
                        emulator=emulator)
