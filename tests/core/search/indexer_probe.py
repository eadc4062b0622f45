"""Run in a fresh interpreter by test_indexer.py: a worker-like process (the local dispatcher
runs turns here) with ``search_indexer=process`` answers a plain turn and a tool turn
(read_file), waits until the indexing child has written the turns' vectors, and prints (JSON)
which heavy modules this process imported, how many messages there are, and the child's pid.
(The encoder itself may load here: routing skills to the first message encodes that message.)
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

# web_extract's and the documents' parsing libraries (they run in the parser child process),
# the browser, speech
HEAVY = ("lxml", "trafilatura", "pypdf", "playwright", "edge_tts", "PIL")


def main(home: str) -> None:
    from pydantic import SecretStr

    from core.config import load_settings
    from core.messages import InboundMessage
    from functions.dispatch import LocalDispatcher
    from functions.ingress import receive
    from functions.runtime import compose
    from iris_testing.scripted_model import FixedRouter, ScriptedModel, call, tool_calls
    from iris_testing.waiting import wait_until

    env = {
        **os.environ,
        "IRIS_HOME": home,
        "IRIS_SEARCH_INDEXER": "process",
        "IRIS_SESSION_TITLES": "false",
        "IRIS_MEMORY_REVIEW_EVERY": "0",
        "IRIS_MEMORY_REVIEW_AT_SESSION_END": "false",
        "IRIS_SANDBOX_ISOLATION": "none",
    }
    settings = load_settings(env).model_copy(update={"api_key": SecretStr("k")})
    scripted = ScriptedModel().then(
        "Hello Ada.", tool_calls(call("read_file", path="notes.txt")), "No notes yet."
    )
    dispatcher = LocalDispatcher()
    rt = compose(settings, dispatcher=dispatcher, router=FixedRouter(scripted))

    async def turn(text: str, pmid: str) -> tuple[str, str]:
        received = await receive(
            rt,
            InboundMessage(
                platform="http",
                chat_id="ada",
                account="http:ada",
                platform_message_id=pmid,
                text=text,
            ),
        )
        await dispatcher.idle()
        entry = rt.store.inbox.get(received.user_id, received.entry_id)
        assert entry.session_id is not None, entry  # the turn ran in a session
        return entry.user_id, entry.session_id

    user, _ = asyncio.run(turn("hi", "1"))
    asyncio.run(turn("what is in notes.txt?", "2"))
    turned = sorted(m for m in HEAVY if m in sys.modules)
    wait_until(
        lambda: rt.store.vectors.count_missing(user, "all-minilm-l6-v2") == 0,
        "the indexing child embeds both turns",
        timeout=120,
    )
    from core.search.indexer import Indexer

    indexer = rt.indexer
    assert isinstance(indexer, Indexer), indexer  # search_indexer=process, not on Modal
    child = indexer.pid
    messages = len(rt.store.messages.for_session(user, _))
    rt.close()
    print(
        json.dumps(
            {
                "after_turns": turned,
                "child": child,
                "parent": os.getpid(),
                "messages": messages,
                "after_indexing": sorted(m for m in HEAVY if m in sys.modules),
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1])
