"""Drain one chat in a child process whose replies go to the fake Telegram/Slack API of the parent
test, dying (os._exit) at a named step of the turn. Settings come from the environment."""

from __future__ import annotations

import asyncio
import os
import sys

from core.config import load_settings
from core.dispatch import ChatRef
from functions import worker
from functions.dispatch import LocalDispatcher
from functions.runtime import build_runtime
from tests.fakes.scripted_model import FixedRouter, ScriptedModel, call, tool_calls

EXIT_CODE = 19


def main(user_id: str, chat_key: str, step: str) -> None:
    model = ScriptedModel().then(tool_calls(call("clock")), "child answer")
    dispatcher = LocalDispatcher()
    rt = build_runtime(load_settings(), dispatcher, router=FixedRouter(model))
    rt.after_turn = []
    dispatcher.bind(rt)

    def die(name: str) -> None:
        if name == step:
            os._exit(EXIT_CODE)

    rt.checkpoint = die
    asyncio.run(worker.drain(rt, ChatRef(user_id, chat_key)))


if __name__ == "__main__":
    main(*sys.argv[1:4])
