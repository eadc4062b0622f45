"""Streamed model calls: tool calls assembled from their fragments, text deltas handed to the
turn's sink, and what a listener sends so the whole equals the stored answer."""

import asyncio

from core.messages import Message
from core.model.llm import LiteLLMModel, ToolSpec
from core.model.stream import StreamAssembler
from core.model.streaming import AnswerFeeds, FeedEvent, StreamedText, streaming_to
from iris_testing.llm_server import ScriptedLLM
from iris_testing.server import serve

USER = Message(role="user", content="hi")
CLOCK = ToolSpec(name="clock", description="time", parameters={"type": "object"})


def chunk(delta=None, finish=None, usage=None, choices=True):
    body = {"object": "chat.completion.chunk"}
    choice = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    body["choices"] = [choice] if choices else []
    if usage is not None:
        body["usage"] = usage
    return body


def fragment(index, *, id=None, name=None, arguments=None):
    function = {}
    if name is not None:
        function["name"] = name
    if arguments is not None:
        function["arguments"] = arguments
    call = {"index": index, "function": function}
    if id is not None:
        call["id"] = id
    return chunk({"tool_calls": [call]})


def test_interleaved_parallel_tool_calls_are_put_together_by_index():
    assembled = StreamAssembler()
    for part in [
        chunk({"role": "assistant", "content": ""}),
        fragment(0, id="call_a", name="clock", arguments=""),
        fragment(1, id="call_b", name="weather", arguments='{"ci'),
        fragment(0, arguments='{"tz": '),
        fragment(1, arguments='ty": "Oslo"}'),
        fragment(0, arguments='"UTC"}'),
        chunk(finish="tool_calls"),
        chunk(usage={"prompt_tokens": 12, "completion_tokens": 7}, choices=False),
    ]:
        assert assembled.add(part) == ""
    message = assembled.message()
    assert [(c.id, c.name, c.parsed_arguments()) for c in message.tool_calls] == [
        ("call_a", "clock", {"tz": "UTC"}), ("call_b", "weather", {"city": "Oslo"})]
    assert assembled.finish_reason == "tool_calls"
    assert assembled.usage["completion_tokens"] == 7


def test_fragments_without_index_and_a_reused_index():
    assembled = StreamAssembler()
    whole = {"id": "x1", "function": {"name": "a", "arguments": "{}"}}
    assembled.add(chunk({"tool_calls": [whole]}))
    assembled.add(chunk({"tool_calls": [{"id": "x2", "function": {"name": "b"}}]}))
    assembled.add(chunk({"tool_calls": [{"function": {"arguments": '{"n": 1}'}}]}))
    assembled.add(fragment(0, id="y1", name="c", arguments="{}"))
    assembled.add(fragment(0, id="y2", name="d", arguments="{}"))
    calls = assembled.message().tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("x1", "a", "{}"), ("x2", "b", '{"n": 1}'), ("y1", "c", "{}"), ("y2", "d", "{}")]


def test_text_deltas_are_returned_and_joined():
    assembled = StreamAssembler()
    pieces = [assembled.add(chunk({"content": word})) for word in ("Tea ", "is ", "ready.")]
    assert pieces == ["Tea ", "is ", "ready."]
    assert assembled.message().content == "Tea is ready." and not assembled.has_tool_calls


def test_streamed_text_completes_to_the_reply():
    plain = StreamedText()
    assert [plain.add(FeedEvent("text", t)) for t in ("Hel", "lo")] == ["Hel", "lo"]
    assert plain.rest("Hello there") == " there"
    assert plain.rest("Hello") == ""

    preamble = StreamedText()
    preamble.add(FeedEvent("text", "Let me look."))
    preamble.add(FeedEvent("reset"))
    assert preamble.add(FeedEvent("text", "It is")) == "\n\nIt is"
    assert preamble.rest("It is 5.") == " 5."

    stopped = StreamedText()
    stopped.add(FeedEvent("text", "Let me look."))
    stopped.add(FeedEvent("reset"))
    assert stopped.rest("I stopped after 3 steps.") == "\n\nI stopped after 3 steps."
    assert StreamedText().rest("whole") == "whole"


def test_feeds_replay_to_late_listeners_and_are_dropped():
    async def scenario():
        feeds = AnswerFeeds()
        sink = feeds.sink("usr_a", 7)
        sink.text("a")
        late = feeds.listen("usr_a", 7)
        sink.text("b")
        assert [e.text for e in late.take()] == ["a", "b"]
        other = feeds.listen("usr_b", 7)  # another user's entry id: nothing
        assert other.take() == []
        other.close()
        waiting = asyncio.ensure_future(late.wait())
        await asyncio.sleep(0)
        assert not waiting.done()
        sink.reset()
        await asyncio.wait_for(waiting, 5)
        assert [e.kind for e in late.take()] == ["reset"]
        await feeds.end("usr_a", 7)
        late.close()
        assert len(feeds) == 0
        never_written = feeds.listen("usr_a", 8)  # the turn ended before anyone listened
        never_written.close()
        assert len(feeds) == 0

    asyncio.run(scenario())


class Collect:
    def __init__(self):
        self.events = []

    def text(self, delta):
        self.events.append(("text", delta))

    def reset(self):
        self.events.append(("reset", ""))


def test_a_streamed_call_hands_text_to_the_sink_and_assembles_tool_calls():
    llm = ScriptedLLM()
    llm.reply("Tea is ready now.")
    llm.tool_calls([("clock", {"tz": "UTC"}, "c1"), ("clock", {"tz": "Asia/Tokyo"}, "c2")],
                   text="Checking the time.")
    with serve(llm.app) as server:
        model = LiteLLMModel(name="openai/scripted-model", api_base=f"{server.url}/v1",
                             api_key="sk-x", retries=0)
        sink = Collect()

        async def two_steps():
            with streaming_to(sink):
                first = await model.complete([USER])
                second = await model.complete([USER], [CLOCK])
            return first, second

        first, second = asyncio.run(two_steps())
    assert first.message.content == "Tea is ready now."
    assert "".join(t for kind, t in sink.events[:4]) == "Tea is ready now."
    assert first.usage.prompt_tokens > 0 and first.usage.completion_tokens > 0
    assert [(c.id, c.parsed_arguments()) for c in second.message.tool_calls] == [
        ("c1", {"tz": "UTC"}), ("c2", {"tz": "Asia/Tokyo"})]
    # words before the tool calls were sent, then taken back with a reset
    assert sink.events[-1] == ("reset", "")
    assert "".join(t for _, t in sink.events[4:]) == "Checking the time."
    assert llm.requests[0]["stream"] is True
    assert llm.requests[0]["stream_options"] == {"include_usage": True}


def test_without_a_sink_the_call_does_not_stream():
    llm = ScriptedLLM()
    llm.reply("whole")
    with serve(llm.app) as server:
        model = LiteLLMModel(name="openai/scripted-model", api_base=f"{server.url}/v1",
                             api_key="sk-x", retries=0)
        response = asyncio.run(model.complete([USER]))
    assert response.message.content == "whole"
    assert "stream" not in llm.requests[0]
