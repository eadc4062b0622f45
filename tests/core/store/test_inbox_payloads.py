"""An inbound message's control flags are fields (``press``, ``stream``, ``tapped``), stored
with the inbox entry and read back typed; entries written while they were keys of ``meta``
(pending when Iris was upgraded) still read as the same flags."""

import json

import pytest

from core.messages import InboundMessage, Press
from core.store.inbox import decode_inbound, encode_inbound


def message(**fields) -> InboundMessage:
    return InboundMessage(platform="telegram", chat_id="42", account="telegram:7",
                          platform_message_id="42:clarify:q_1", text="2", **fields)


@pytest.mark.both_backends
def test_flags_survive_the_inbox(store):
    pressed = message(meta={"message_id": 9, "callback_id": "cb"}, press=Press("q_1", 2))
    entry_id = store.inbox.add("u_1", pressed)
    assert entry_id is not None
    read = store.inbox.get("u_1", entry_id).message
    assert read == pressed and read.press == Press("q_1", 2) and not read.stream
    streamed = message(stream=True, tapped="wamid.T")
    assert decode_inbound(encode_inbound(streamed)) == streamed


def test_an_entry_stored_with_flags_in_meta_reads_as_fields():
    raw = json.dumps({
        "platform": "telegram", "chat_id": "42", "account": "telegram:7",
        "platform_message_id": "42:clarify:q_1", "text": "2", "attachments": [],
        "meta": {"message_id": 9, "quote": False, "clarify": "q_1", "choice": 2,
                 "callback_id": "cb"},
    })
    read = decode_inbound(raw)
    assert read.press == Press("q_1", 2)
    assert read.meta == {"message_id": 9, "quote": False, "callback_id": "cb"}
    assert decode_inbound(encode_inbound(read)) == read
    old_stream = json.loads(raw)
    old_stream["meta"] = {"stream": True}
    assert decode_inbound(json.dumps(old_stream)).stream is True
    old_tap = json.loads(raw)
    old_tap["meta"] = {"message_id": "wamid.X", "tapped": "wamid.T"}
    tapped = decode_inbound(json.dumps(old_tap))
    assert tapped.tapped == "wamid.T" and tapped.press is None
    assert tapped.meta == {"message_id": "wamid.X"}
