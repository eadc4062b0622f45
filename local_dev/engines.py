"""The inference engines the embedded model server can run on.

``gpt4all`` ships llama.cpp prebuilt in its wheel (Linux x86-64, macOS, Windows): installing it
takes seconds, where compiling llama-cpp-python took 14 minutes on an idle 2-core machine.
``llama_cpp`` (llama-cpp-python, compiled at install) is the fallback where no such wheel exists
(Linux on arm64). Both take an already rendered prompt and hand text back piece by piece.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from local_dev.gguf_meta import loadable_copy

# gpt4all tries its CUDA builds first and says so on stderr when the machine has no CUDA.
PROBE_NOISE = re.compile(r"^Failed to load libllamamodel-\S*cuda\S*: dlopen: .*cannot open "
                         r"shared object file")
PROBE_NOTE = ("gpt4all looked for CUDA (GPU) libraries and found none, as expected here: the "
              "model runs on the CPU")

# Returns False to stop the generation (a stop string was seen, or the client went away).
OnPiece = Callable[[str], bool]


@dataclass(frozen=True)
class Sampling:
    max_tokens: int
    temperature: float = 0.7
    top_p: float = 0.95
    top_k: int = 40
    min_p: float = 0.05
    repeat_penalty: float = 1.1


@dataclass(frozen=True)
class Counts:
    prompt_tokens: int
    completion_tokens: int


class Engine(Protocol):
    name: str

    def generate(self, turns: list[str], sampling: Sampling, on_piece: OnPiece) -> Counts:
        """Blocking: read the prompt, given as its rendered turns (the last one opens the
        answer; special tokens such as <|im_start|> are read as such), and generate up to
        ``sampling.max_tokens`` tokens, calling ``on_piece`` with each piece of text."""


class GPT4AllEngine:
    """gpt4all's model keeps the tokens it has read. The turns read for the last request are
    remembered with the context position after each, so the next request (the same
    conversation, one exchange longer) reads only the turns that differ: the model's own answer
    as Iris stored it, the new message, the opening of the next answer."""

    name = "gpt4all"

    def __init__(self, model: Path, *, threads: int, context: int, cache: Path) -> None:
        from gpt4all import GPT4All

        model = loadable_copy(model, cache)
        self._model = GPT4All(model_name=model.name, model_path=str(model.parent),
                              allow_download=False, device="cpu", n_threads=threads,
                              n_ctx=context, verbose=False)
        self._read: list[tuple[str, int]] = []  # (turn, context position after it)

    def generate(self, turns: list[str], sampling: Sampling, on_piece: OnPiece) -> Counts:
        raw = self._model.model
        kept = 0
        while kept < min(len(self._read), len(turns) - 1) and self._read[kept][0] == turns[kept]:
            kept += 1
        self._read = self._read[:kept]
        read = made = 0

        def on_prompt_token(token_id: int) -> bool:
            nonlocal read
            read += 1
            return True

        def on_token(token_id: int, text: str) -> bool:
            return on_piece(text)

        def counting_decoder(callback: Any) -> Any:
            # The binding's decoder holds back a token that ends inside a UTF-8 character and
            # calls back once for the whole character: counted here, every token is counted,
            # so an answer cut at max_tokens is reported as cut ("length").
            decode = type(raw)._callback_decoder(raw, callback)

            def raw_token(token_id: int, response: bytes) -> bool:
                nonlocal made
                made += 1
                return bool(decode(token_id, response))

            return raw_token

        def call(text: str, predict: int, callback: Any) -> None:
            # The binding's public generate() reads special tokens as text outside its own
            # chat session; this lower call with special=True reads the markers as markers.
            # The context position is set here, never reset by the binding.
            raw.prompt_model(
                text, "%1", callback, n_predict=predict, temp=sampling.temperature,
                top_k=sampling.top_k, top_p=sampling.top_p, min_p=sampling.min_p,
                repeat_penalty=sampling.repeat_penalty, repeat_last_n=64, n_batch=128,
                reset_context=False, special=True,
            )

        if raw.context is not None:
            raw.context.n_past = self._read[-1][1] if self._read else 0
        for turn in turns[kept:-1]:  # read each turn alone, to know where it ends
            call(turn, 0, lambda token_id, text: False)
            self._read.append((turn, raw.context.n_past))
        start = raw.context.n_past if raw.context is not None else 0
        # the binding's per-prompt-token hook: counts the last turn's tokens, read after ``start``
        raw._prompt_callback = on_prompt_token
        raw._callback_decoder = counting_decoder
        call(turns[-1], sampling.max_tokens, on_token)
        if raw.context.n_past < start + read:  # the engine made room by forgetting: start over
            self._read = []
        return Counts(prompt_tokens=start + read, completion_tokens=made)


class LlamaCppEngine:
    """llama-cpp-python reuses the longest prefix of tokens it has already read by itself."""

    name = "llama_cpp"

    def __init__(self, model: Path, *, threads: int, context: int, cache: Path) -> None:
        from llama_cpp import Llama

        self._llama: Any = Llama(model_path=str(model), n_ctx=context, n_threads=threads,
                                 n_threads_batch=threads, verbose=False)

    def generate(self, turns: list[str], sampling: Sampling, on_piece: OnPiece) -> Counts:
        tokens = self._llama.tokenize("".join(turns).encode(), add_bos=False, special=True)
        made = 0
        for chunk in self._llama.create_completion(
            tokens, max_tokens=sampling.max_tokens, temperature=sampling.temperature,
            top_p=sampling.top_p, top_k=sampling.top_k, min_p=sampling.min_p,
            repeat_penalty=sampling.repeat_penalty, stream=True,
        ):
            choice = chunk["choices"][0]
            if choice.get("finish_reason") is not None and not choice["text"]:
                break  # the closing chunk: no token
            made += 1
            if not on_piece(choice["text"]):
                break
        return Counts(prompt_tokens=len(tokens), completion_tokens=made)


ENGINES: dict[str, type[GPT4AllEngine] | type[LlamaCppEngine]] = {
    "gpt4all": GPT4AllEngine, "llama_cpp": LlamaCppEngine,
}


def available() -> str | None:
    """The first engine installed, in order of preference; None if neither is."""
    return next((name for name in ENGINES if importlib.util.find_spec(name) is not None), None)


@contextmanager
def quiet_probing() -> Iterator[None]:
    """Run the engine's start with stderr (fd 2, where the native libraries write) caught:
    the lines of its search for GPU libraries become one line saying what they meant, and
    anything else is passed on as it was."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as caught:
        os.dup2(caught.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            caught.seek(0)
            lines = caught.read().decode(errors="replace").splitlines()
            kept = [line for line in lines if not PROBE_NOISE.match(line)]
            for line in kept:
                print(line, file=sys.stderr)
            if len(kept) < len(lines):
                print(PROBE_NOTE, file=sys.stderr)
            sys.stderr.flush()


def load(model: Path, *, threads: int, context: int, cache: Path) -> Engine:
    name = available()
    if name is None:
        raise RuntimeError("no inference engine is installed (gpt4all or llama-cpp-python)")
    with quiet_probing():
        return ENGINES[name](model, threads=threads, context=context, cache=cache)
