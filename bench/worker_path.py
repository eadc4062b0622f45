"""The worker's path for one Telegram message: which of Iris' modules it enters, and how often a
call climbs from a lower layer of core to a higher one.

A real stack (platform_stack: the web app on loopback, the fake Bot API) takes the webhook with
a dispatcher that only records the chat; then ``functions.worker.drain`` runs that chat here,
under ``sys.setprofile``. Each call from one module of ``core``/``functions`` into another is a
step; a step whose callee sits in a higher layer than its caller (the ``core-layers`` contract
in pyproject.toml; ``functions`` above all of core) is a climb. Calls that run in the store's
lane threads are not seen (the profile is this thread's): the figure is the worker's own path.

    .venv/bin/python bench/worker_path.py [--layers-from pyproject.toml]

For an older tree, run this file from that tree with ``--layers-from`` this tree's pyproject:
modules that no longer exist are placed by ``OLD_NAMES``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import tomllib
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# Root modules of core before issue 32 grouped them, by the layer their code now sits in.
OLD_NAMES = {
    **dict.fromkeys(("turn", "turn_commit", "replies", "cancel"), "turn"),
    **dict.fromkeys(("hooks", "services", "context", "toolkit", "dispatch"), "contracts"),
    **dict.fromkeys(("llm", "llm_direct", "llm_stream", "model_table", "streaming", "routing",
                     "model_choice", "choice", "providers", "priority", "prompt_cache",
                     "printed_calls", "answer_text", "stream"), "model"),
    **dict.fromkeys(("documents", "images", "vision"), "intake"),
    **dict.fromkeys(("clarify", "clarify_close", "confirm"), "asking"),
    **dict.fromkeys(("doctor", "doctor_features", "doctor_platforms"), "doctor"),
    "approvals": "acting", "catalogue": "tools", "persona": "memory",
}


class Recording:
    """A dispatcher that only notes the chat, so the drain runs where it is measured."""

    def __init__(self) -> None:
        self.chats: list[Any] = []

    async def drain(self, chat: Any) -> None:
        self.chats.append(chat)


def layer_of(layers: list[list[str]]) -> Any:
    index = {name: depth for depth, names in enumerate(layers) for name in names}

    def layer(module: str) -> int | None:
        parts = module.split(".")
        if parts[0] == "functions":
            return -1
        if parts[0] != "core" or len(parts) < 2:
            return None
        name = parts[1]
        if name not in index and len(parts) == 2:
            name = OLD_NAMES.get(name, name)
        return index.get(name)

    return layer


def read_layers(pyproject: Path) -> list[list[str]]:
    config = tomllib.loads(pyproject.read_text())
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract.get("id") == "core-layers":
            return [[name.strip() for name in layer.split(":")] for layer in contract["layers"]]
    raise SystemExit(f"{pyproject} has no core-layers contract")


def measure(layers: list[list[str]]) -> tuple[Counter[str], int, list[tuple[str, str]]]:
    from functions.worker import drain
    from iris_testing.platform_stack import platform_stack

    layer = layer_of(layers)
    entered: Counter[str] = Counter()
    climbs: list[tuple[str, str]] = []

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event != "call" or frame.f_code.co_name == "<module>":  # an import, not the path
            return
        callee = frame.f_globals.get("__name__", "")
        caller_frame = frame.f_back
        caller = caller_frame.f_globals.get("__name__", "") if caller_frame else ""
        if callee == caller or layer(callee) is None:
            return
        entered[callee] += 1
        high, low = layer(callee), layer(caller)
        if low is not None and high is not None and high < low:
            climbs.append((caller, callee))

    recording = Recording()
    with tempfile.TemporaryDirectory() as home, platform_stack(Path(home),
                                                               dispatcher=recording) as stack:
        for text in ("warm up", "hello there"):  # the first drain imports; the second is measured
            update = stack.telegram.make_update(text)
            update["update_id"] = update["message"]["message_id"] = len(recording.chats) + 1
            response = stack.telegram_post(update)
            assert response.status_code == 200, response.text
            if len(recording.chats) == 1:
                asyncio.run(drain(stack.rt, recording.chats[0]))
        chat = recording.chats[-1]
        sys.setprofile(profile)
        try:
            asyncio.run(drain(stack.rt, chat))
        finally:
            sys.setprofile(None)
        assert len(stack.telegram.sent_messages()) == 2, "a reply was not sent"
    return entered, len(climbs), climbs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers-from", type=Path, default=ROOT / "pyproject.toml")
    args = parser.parse_args()
    entered, climbs, pairs = measure(read_layers(args.layers_from))
    core = sorted(m for m in entered if m.startswith("core."))
    print(f"modules of core entered: {len(core)}; of functions: "
          f"{len([m for m in entered if m.startswith('functions.')])}")
    print(f"calls climbing to a higher layer: {climbs}")
    for (caller, callee), times in Counter(pairs).most_common(10):
        print(f"   {caller} -> {callee} ({times})")
    print("most entered:", ", ".join(f"{m} {n}" for m, n in entered.most_common(8)))


if __name__ == "__main__":
    main()
