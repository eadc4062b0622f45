"""Run one drain in a child process that dies (os._exit) at a named step of the turn."""

from __future__ import annotations

import asyncio
import os
import sys

from core.config import load_settings
from core.contracts.dispatch import ChatRef
from functions import worker
from functions.dispatch import LocalDispatcher
from functions.runtime import compose
from iris_testing.scripted_model import FixedRouter, ScriptedModel, call, tool_calls

EXIT_CODE = 17


def main(user_id: str, chat_key: str, step: str) -> None:
    model = ScriptedModel().then(tool_calls(call("clock")), "child answer")
    dispatcher = LocalDispatcher()
    rt = compose(load_settings(), dispatcher=dispatcher, router=FixedRouter(model))

    def die(name: str) -> None:
        if name == step:
            os._exit(EXIT_CODE)

    rt.checkpoint = die
    asyncio.run(worker.drain(rt, ChatRef(user_id, chat_key)))


if __name__ == "__main__":
    main(*sys.argv[1:4])
