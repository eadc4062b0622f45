"""Subagents: child turns that work on delegated tasks in parallel and report back.

A child runs in-process, inside the parent's turn (so the chat lease, the sandbox and the
parent's model settings are shared), in a session of its own: chat ``subagent:<parent
session>:<id>``, platform ``subagent``, owned by the same user. Its messages and usage are
stored as soon as it ends (whatever way it ends), so its work is searchable like any session.
It gets the parent's tools minus memory writes, cron, skill edits and further delegation, a
short system prompt of its own, and ``subagent_max_iterations`` steps. Dangerous commands are
refused in a child: no person is there to approve them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

from core.contracts.services import ChildResult, DelegatingCall
from core.contracts.toolkit import ToolContext, Toolset
from core.errors import ProviderError
from core.ids import new_id
from core.messages import Message, Usage

if TYPE_CHECKING:
    from core.contracts.deps import TurnDeps

log = logging.getLogger("iris.subagents")

MAX_CHILDREN = 3
RESTRICTED = ("memory", "cronjob", "delegate_task", "skill_manage")
PLATFORM = "subagent"

CHILD_PROMPT = """\
You are a subagent of Iris. Another agent delegated one task to you; it sees only your final \
answer. Work on the task with your tools (the workspace is shared with that agent), do not \
ask questions (nobody will answer), and never invent results. Finish with a concise summary: \
what you did, what you found, files you created or changed, and anything left undone."""


def child_request(goal: str, context: str, task: str) -> str:
    parts = [f"Overall goal: {goal.strip()}"]
    if context.strip():
        parts.append(f"Context from the delegating agent:\n{context.strip()}")
    parts.append(f"Your task: {task.strip()}")
    return "\n\n".join(parts)


def _merge(usages: Sequence[Usage]) -> list[Usage]:
    merged: dict[str, Usage] = {}
    for usage in usages:
        merged[usage.model] = merged[usage.model] + usage if usage.model in merged else usage
    return list(merged.values())


class SubagentRunner:
    """Runs child turns for ``delegate_task``; ``deps`` gives the runtime's turn dependencies."""

    def __init__(self, deps: Callable[[], TurnDeps]):
        self._deps = deps

    async def run(
        self, parent: DelegatingCall, goal: str, context: str, tasks: Sequence[str]
    ) -> list[ChildResult]:
        if not 1 <= len(tasks) <= MAX_CHILDREN:
            raise ValueError(f"between 1 and {MAX_CHILDREN} tasks, got {len(tasks)}")
        deps = self._deps()
        user = deps.store.users.get(parent.user_id)
        model = deps.services.router.main(user.model)
        toolset = deps.toolset.offered(deps.settings).without(RESTRICTED)
        runs = [
            self._child(deps, model, toolset, parent, child_request(goal, context, task), task)
            for task in tasks
        ]
        return list(await asyncio.gather(*runs))

    async def _child(
        self, deps: TurnDeps, model: Any, toolset: Toolset, parent: DelegatingCall, request: str,
        task: str,
    ) -> ChildResult:
        store = deps.store
        chat_key = f"{PLATFORM}:{parent.session_id}:{new_id('t')}"
        session = store.sessions.start(parent.user_id, chat_key, PLATFORM, reason=None)
        store.sessions.freeze_prompt(parent.user_id, session.id, CHILD_PROMPT)
        ctx = ToolContext(
            store=store, settings=deps.settings, services=parent.services,
            user_id=parent.user_id, session_id=session.id, chat_key=chat_key, platform=PLATFORM,
            account=parent.account, inbox_id=parent.inbox_id,
            tainted_by=set(parent.tainted_by),  # the task text may carry what the parent read
        )
        user_message = Message(role="user", content=request)
        convo = [Message(role="system", content=CHILD_PROMPT), user_message]
        new = [user_message]
        usages: list[Usage] = []
        status, summary = "failed", "the subagent did not finish"
        try:
            status, summary = await self._loop(deps, model, toolset, ctx, convo, new, usages)
        except ProviderError as error:
            summary = error.user_message()
        except Exception as exc:
            log.exception("subagent in session %s crashed", session.id)
            summary = f"the subagent crashed: {type(exc).__name__}: {exc}"
        finally:
            self._store(deps, parent, session.id, new, usages, status)
        calls = sum(len(m.tool_calls) for m in new)
        return ChildResult(task=task, session_id=session.id, status=status, summary=summary,
                           tool_calls=calls)

    async def _loop(
        self, deps: TurnDeps, model: Any, toolset: Toolset, ctx: ToolContext,
        convo: list[Message], new: list[Message], usages: list[Usage],
    ) -> tuple[str, str]:
        async with AsyncExitStack() as stack:
            for provider in deps.tool_providers:
                toolset = toolset.with_tools(await stack.enter_async_context(provider(ctx)))
            toolset = toolset.without(RESTRICTED)
            ctx.toolset = toolset
            specs = toolset.specs()
            steps = deps.settings.subagent_max_iterations
            last = ""
            for _ in range(steps):
                response = await model.complete(convo, specs)
                usages.append(response.usage)
                convo.append(response.message)
                new.append(response.message)
                last = response.message.content or last
                if not response.message.tool_calls:
                    return "done", response.message.content or "(empty answer)"
                results = await toolset.call_all(ctx, response.message.tool_calls)
                convo.extend(results)
                new.extend(results)
        note = f"(stopped after {steps} steps without a final answer)"
        return "stopped", f"{last}\n{note}" if last else note

    def _store(
        self, deps: TurnDeps, parent: DelegatingCall, session_id: str, messages: list[Message],
        usages: list[Usage], status: str,
    ) -> None:
        store = deps.store
        at = store.clock.now()
        with store.transaction():
            store.messages.insert(
                parent.user_id, session_id, messages, at=at, author=parent.account,
                inbox_id=parent.inbox_id,
            )
            for usage in _merge(usages):
                store.usage.record(
                    parent.user_id, usage, session_id=session_id, inbox_id=parent.inbox_id
                )
            store.sessions.end(parent.user_id, session_id, at=at, reason=f"subagent {status}")
