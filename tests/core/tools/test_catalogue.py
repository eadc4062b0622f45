"""The tool catalogue: rarely used and MCP tools are listed by load_tools, loaded for the rest of
the session on request (or by calling them), and only ever appended to the tool list."""

import asyncio
import json

import pytest
from pydantic import BaseModel

from core.contracts.toolkit import Tool, ToolContext
from core.messages import ToolCall
from core.tools import default_toolset
from core.tools.catalogue import SessionToolset
from tests.core.acting.support import make_ctx


class NoArgs(BaseModel):
    pass


class FakeMcp(Tool):
    discoverable = False
    deferred = True
    Args = NoArgs
    description = "A tool of an MCP server."

    def __init__(self, server, tool):
        self.name = f"mcp__{server}__{tool}"
        self.group = f"mcp:{server}"
        self.description = f"[MCP server {server}] Does {tool}."

    async def run(self, ctx, args):
        return f"{self.name} ran"


@pytest.fixture
def ctx(store, settings):
    return make_ctx(store, settings)


def toolset():
    return default_toolset().with_tools([FakeMcp("git", "log"), FakeMcp("git", "diff")])


def names(specs):
    return [s.name for s in specs]


def load(tools, ctx, *wanted, name="load_tools"):
    args = {"names": list(wanted)} if name == "load_tools" else {}
    call = ToolCall(id="c1", name=name, arguments=json.dumps(args))
    return asyncio.run(tools.call_all([call]))[0].content


def test_the_catalogue_is_listed_not_sent(ctx):
    tools = SessionToolset(toolset(), ctx)
    sent = names(tools.specs())
    assert sent[-1] == "load_tools" and "terminal" in sent
    assert not {"cronjob", "delegate_task", "session_search", "mcp__git__log"} & set(sent)
    catalogue = tools.specs()[-1].description
    assert "cronjob (schedule reminders and recurring tasks)" in catalogue
    assert "mcp:git (2 tools: log, diff)" in catalogue


def test_loading_appends_for_the_rest_of_the_session(ctx, store):
    tools = SessionToolset(toolset(), ctx)
    before = [s.to_openai() for s in tools.specs()]
    assert load(tools, ctx, "cronjob") == "Loaded cronjob: call it directly from now on."
    after = [s.to_openai() for s in tools.specs()]
    assert after[: len(before)] == before and names(tools.specs())[-1] == "cronjob"
    assert "already loaded" in load(tools, ctx, "cronjob")
    load(tools, ctx, "mcp:git")
    assert names(tools.specs())[-3:] == ["cronjob", "mcp__git__log", "mcp__git__diff"]

    # the next turn of the session rebuilds the same list, byte for byte (cacheable prefix)
    again = ToolContext(**{**vars(ctx), "loaded_tools": store.session_tools.loaded(
        ctx.user_id, ctx.session_id), "tainted_by": set()})
    rebuilt = SessionToolset(toolset(), again)
    assert json.dumps([s.to_openai() for s in rebuilt.specs()]) == json.dumps(
        [s.to_openai() for s in tools.specs()])


def test_calling_a_catalogue_tool_directly_runs_and_loads_it(ctx, store):
    tools = SessionToolset(toolset(), ctx)
    assert load(tools, ctx, name="mcp__git__log") == "mcp__git__log ran"
    assert names(tools.specs())[-1] == "mcp__git__log"
    assert store.session_tools.loaded(ctx.user_id, ctx.session_id) == ["mcp__git__log"]


def test_unknown_names_are_an_error_and_load_nothing(ctx, store):
    tools = SessionToolset(toolset(), ctx)
    out = load(tools, ctx, "cronjob", "teleport")
    assert out.startswith("Error: no catalogue entry named 'teleport'")
    assert store.session_tools.loaded(ctx.user_id, ctx.session_id) == []


def test_loads_belong_to_one_session_of_one_user(ctx, store, settings):
    load(SessionToolset(toolset(), ctx), ctx, "cronjob")
    other_session = store.sessions.start(ctx.user_id, "http:alice:2", "http")
    assert store.session_tools.loaded(ctx.user_id, other_session.id) == []
    bob = make_ctx(store, settings, "http:bob")
    assert store.session_tools.loaded(bob.user_id, ctx.session_id) == []


def test_a_toolset_without_a_catalogue_sends_everything(ctx):
    from core.contracts.toolkit import Toolset
    from core.tools import default_tools

    demo = Toolset((t for t in default_tools() if t.name in ("clock", "session_info")),
                   catalogue=False)
    tools = SessionToolset(demo.with_tools([FakeMcp("git", "log")]), ctx)
    assert names(tools.specs()) == ["clock", "session_info", "mcp__git__log"]
