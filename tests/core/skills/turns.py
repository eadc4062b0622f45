"""Running turns through the real worker path with the scripted model."""

from __future__ import annotations

import asyncio
import itertools
import json

from core.messages import InboundMessage, Message, ToolCall
from functions.ingress import receive

_ids = itertools.count(1)


def call(tool: str, **arguments: object) -> Message:
    """An assistant message calling ``tool`` once (arguments may include ``name``)."""
    tool_call = ToolCall(id=f"call_{next(_ids)}", name=tool, arguments=json.dumps(arguments))
    return Message(role="assistant", content="", tool_calls=(tool_call,))


def send(rt, text: str, pmid: str, account: str = "http:alice", chat: str = "alice"):
    message = InboundMessage(platform="http", chat_id=chat, account=account,
                             platform_message_id=pmid, text=text)

    async def go():
        received = await receive(rt, message)
        await rt.dispatcher.idle()
        return rt.store.inbox.get(received.user_id, received.entry_id)

    return asyncio.run(go())
