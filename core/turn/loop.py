"""One agent turn: pure orchestration. Resolve the session, build the prompt, loop model → tools
until a final answer or the step cap, and return everything to persist. No I/O details here."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

from core.asking.clarify import settle
from core.commands import CommandContext, run_command
from core.contracts.deps import TurnDeps
from core.contracts.outcome import TurnCancelled, TurnOutcome
from core.contracts.prompt import PromptInputs, build_system_prompt
from core.contracts.toolkit import ToolContext, Toolset, close_resources
from core.errors import ConfigError, NotFound, ProviderError, TookTooLong
from core.identity.access import is_owner_account
from core.intake.documents import has_documents, take_documents
from core.intake.images import has_images
from core.intake.vision import ImageIntake, show_images, sight_of, take_for_turn
from core.lanes import blocking, in_store_lane
from core.messages import ImageRef, Message, Usage
from core.model.answer_text import cut_short_note, end_cleanly, strip_tool_syntax
from core.model.priority import Yielding
from core.model.streaming import AnswerSink, streaming_to
from core.parsers.runner import ParseLimits
from core.platforms.voice import has_voice, transcribe_voice
from core.sessions.compression import fit_context

if TYPE_CHECKING:
    from core.model.llm import ModelResponse
    from core.store.inbox import InboxEntry
    from core.store.sessions import Session
    from core.store.users import User

log = logging.getLogger("iris.turn")

REPEAT_LIMIT = 2  # identical tool-call rounds in a row before tools are withheld
# Asked once more of a model that printed a tool call as text instead of answering.
PLAIN_WORDS = Message(role="user", content="Answer my last message in plain words. No tool can "
                      "be called here.")
PRINTED_CALL_ONLY = ("(The model answered with tool-call syntax instead of words, twice; "
                     "try asking another way.)")


def count_tool_calls(messages: Sequence[Message]) -> int:
    return sum(len(m.tool_calls) for m in messages)


def merge_usage(usages: Sequence[Usage]) -> list[Usage]:
    """One usage record per model."""
    merged: dict[str, Usage] = {}
    for usage in usages:
        merged[usage.model] = merged[usage.model] + usage if usage.model in merged else usage
    return list(merged.values())


def resolve_session(deps: TurnDeps, entry: InboxEntry) -> Session:
    message = entry.message
    store = deps.store
    if message.session_hint:
        try:
            return store.sessions.get(entry.user_id, message.session_hint)
        except NotFound:
            log.warning("inbox %s pins unknown session; using the chat's current one", entry.id)
    return store.sessions.current(
        entry.user_id, entry.chat_key, message.surface,
        idle_seconds=deps.settings.session_idle_hours * 3600, at=entry.received_at,
    )


def system_prompt(deps: TurnDeps, entry: InboxEntry, session: Session, first_text: str) -> str:
    """The session's frozen system prompt, built on its first turn."""
    if session.system_prompt:
        return session.system_prompt
    inputs = PromptInputs(
        store=deps.store, settings=deps.settings, user_id=entry.user_id, session=session,
        platform=entry.message.platform, first_message=first_text,
    )
    built = build_system_prompt(inputs, deps.sections)
    return deps.store.sessions.freeze_prompt(entry.user_id, session.id, built)


def _begin(deps: TurnDeps, entry: InboxEntry) -> tuple[Session, User]:
    """The turn's session and user (run in the ``store`` lane, off the event loop)."""
    store = deps.store
    session = resolve_session(deps, entry)
    if not session.system_prompt:  # its first turn builds it: read its inputs at once
        store.drains.prefetch_prompt(entry.user_id)
    if entry.message.stream:  # a streaming caller sends the session as a header
        store.inbox.note_session(entry.user_id, entry.id, session.id)
    user = store.users.get(entry.user_id)
    if user.kind == "group" or entry.message.platform == "slack":
        from core.teams.binding import join_where_written

        join_where_written(store, entry.user_id, user.kind, entry.message.account)
    return session, user


def _context(deps: TurnDeps, entry: InboxEntry, session_id: str, text: str,
             commanded: bool) -> tuple[Any, Any]:
    """History read ahead, a pending question settled, the session's loaded tools (run in
    the ``store`` lane)."""
    store = deps.store
    store.drains.prefetch_context(entry.user_id, session_id, entry.id,
                                  history=deps.settings.history_messages,
                                  chat_key=None if commanded else entry.chat_key)
    settled = None if commanded else settle(store, deps.settings, entry, text)
    return settled, store.session_tools.loaded(entry.user_id, session_id)


def took_too_long(error: TookTooLong) -> str:
    return f"Sorry, {error}. Please try again in a while."


async def run_turn(deps: TurnDeps, entry: InboxEntry) -> TurnOutcome:
    message = entry.message
    store = deps.store
    session, user = await in_store_lane(entry.user_id, _begin, deps, entry)
    text = message.text
    if has_voice(message):
        heard = await transcribe_voice(
            deps.settings, deps.services.senders, message,
            charge=lambda usage: store.usage.record(entry.user_id, usage, session_id=session.id,
                                                    inbox_id=entry.id))
        if heard.reply is not None:
            return TurnOutcome(session_id=session.id, messages=[], reply=heard.reply,
                               status=heard.status, error=heard.error)
        text = heard.text
    if has_documents(message):
        taken = await take_documents(message, entry.user_id, text,
                                     senders=deps.services.senders,
                                     workspaces=deps.services.workspaces,
                                     limits=ParseLimits.from_settings(deps.settings))
        text = taken.text
    images: tuple[ImageRef, ...] = ()
    if has_images(message):
        intake = await _take_images(deps, entry, user.model, text)
        if intake.reply is not None:
            return TurnOutcome(session_id=session.id, messages=[], reply=intake.reply)
        text, images = intake.text, intake.images
    extra: str | None = None
    commanded = text.lstrip().startswith("/")  # commands leave a clarify question open
    if commanded:
        ctx = CommandContext(
            store=store, settings=deps.settings, services=deps.services, user_id=entry.user_id,
            account=message.account, chat_key=entry.chat_key, platform=message.platform,
            surface=message.surface, session=session, inbox_id=entry.id,
            is_owner=user.is_owner or is_owner_account(deps.settings, message.account),
        )
        result = await run_command(ctx, text)
        if result is not None:
            session = result.session or session
            if result.continue_with is None:
                name = text.strip().split()[0]
                return TurnOutcome(
                    session_id=session.id, messages=[], reply=result.reply or "", command=name
                )
            text, extra = result.continue_with, result.extra_context

    user_message = Message(role="user", content=f"{extra}\n\n{text}" if extra else text,
                           images=images)
    # The first turn of a session builds the prompt: skill ranking runs the embedding model and
    # memory entries are scanned again, CPU work that must not hold up the event loop.
    try:
        prompt = await blocking("prompt", entry.user_id, system_prompt, deps, entry, session, text,
                                what="preparing this conversation")
    except TookTooLong as error:
        return TurnOutcome(session_id=session.id, messages=[], reply=took_too_long(error),
                           status="failed", error=f"timeout: {error}")
    system = Message(role="system", content=prompt)
    new: list[Message] = [user_message]
    usages: list[Usage] = []
    tool_ctx = ToolContext(
        store=store, settings=deps.settings, services=deps.services, user_id=entry.user_id,
        session_id=session.id, chat_key=entry.chat_key, platform=message.platform,
        account=message.account, inbox_id=entry.id,
    )
    answers = deps.answers if message.stream else None
    sink = answers.sink(entry.user_id, entry.id) if answers is not None else None
    try:
        async with AsyncExitStack() as stack:
            tool_ctx.resources = {}
            stack.push_async_callback(close_resources, tool_ctx.resources)
            toolset = deps.toolset.offered(deps.settings)
            for provider in deps.tool_providers:
                toolset = toolset.with_tools(await stack.enter_async_context(provider(tool_ctx)))
            job_model = message.cron.model if message.cron is not None else None
            model = deps.services.router.main(job_model or user.model)
            settled, tool_ctx.loaded_tools = await in_store_lane(
                entry.user_id, _context, deps, entry, session.id, text, commanded)
            if settled is not None:
                if settled.stale:  # a button pressed for a question answered meanwhile
                    return TurnOutcome(session_id=session.id, messages=[], reply="",
                                       command="clarify")
                if settled.text != text:
                    user_message = Message(role="user", content=settled.text, images=images)
                    new[0] = user_message
            if message.platform == "cron" and deps.priority is not None and (
                model.name == deps.settings.model
            ):
                model = Yielding(model, deps.priority)
            fitted = await fit_context(
                store, deps.settings, deps.services.router, model, entry.user_id, session.id,
                system, user_message,
            )
            convo, usages = fitted.convo, list(fitted.usage)
            if any(m.images for m in convo):
                sight = await sight_of(deps.settings, model.name)
                convo = await show_images(convo, store, entry.user_id, deps.settings, sight)
            tool_ctx.tainted_by.update(_outside_content(convo))
            reply = await _loop(deps, model, toolset, tool_ctx, convo, new, usages, sink)
    except ProviderError as error:
        log.warning("turn for inbox %s failed: %s: %s", entry.id, error.kind, error)
        return TurnOutcome(
            session_id=session.id, messages=new, reply=error.user_message(),
            usage=merge_usage(usages), status="failed", error=f"{error.kind}: {error}",
            tool_calls=count_tool_calls(new),
        )
    except TurnCancelled:
        new.append(Message(role="assistant", content="(stopped at the user's request)"))
        return TurnOutcome(
            session_id=session.id, messages=new, reply="Stopped.", usage=merge_usage(usages),
            status="cancelled", error="cancelled: stopped with /stop",
            tool_calls=count_tool_calls(new),
        )
    except ConfigError as error:
        return TurnOutcome(
            session_id=session.id, messages=new, reply=f"Iris is not configured: {error}",
            status="failed", error=f"config: {error}",
        )
    except TookTooLong as error:
        return TurnOutcome(
            session_id=session.id, messages=new, reply=took_too_long(error),
            usage=merge_usage(usages), status="failed", error=f"timeout: {error}",
            tool_calls=count_tool_calls(new),
        )
    finally:
        if answers is not None:
            await answers.end(entry.user_id, entry.id)
    return TurnOutcome(
        session_id=session.id, messages=new, reply=reply, usage=merge_usage(usages),
        tool_calls=count_tool_calls(new), model=model.name,
        target_extras=tool_ctx.asked.target() if tool_ctx.asked is not None else {},
    )


async def _loop(
    deps: TurnDeps, model: Any, toolset: Toolset, tool_ctx: ToolContext,
    convo: list[Message], new: list[Message], usages: list[Usage],
    sink: AnswerSink | None = None,
) -> str:
    """Model → tools until a final answer or the step cap; appends to convo/new/usages."""
    from core.tools.catalogue import SessionToolset

    tools = SessionToolset(toolset, tool_ctx)
    previous: tuple[tuple[str, str], ...] | None = None
    repeats = 0
    nudged = printed_calls = False
    for _ in range(deps.settings.max_iterations):
        if tool_ctx.inbox_id is not None and await in_store_lane(
            tool_ctx.user_id, deps.store.cancels.requested, tool_ctx.user_id, tool_ctx.inbox_id
        ):
            raise TurnCancelled
        # Loop guard: a model repeating the very same calls, or answering with nothing at all,
        # is asked again without tools, so it must answer in words.
        withhold = repeats >= REPEAT_LIMIT or nudged or not deps.settings.model_uses_tools
        asked = [*convo, PLAIN_WORDS] if nudged and printed_calls else convo
        # Only the model call streams: a tool's own model calls never reach the answer.
        with streaming_to(sink):
            response = await model.complete(asked, [] if withhold else tools.specs())
        deps.checkpoint("after_model")
        usages.append(response.usage)
        if not response.message.tool_calls:
            text, printed = strip_tool_syntax(response.message.content)
            if not text.strip() and not nudged:  # nothing, or only a call printed as text
                nudged, printed_calls = True, printed
                continue
            return _final(deps, response, text, printed, convo, new)
        convo.append(response.message)
        new.append(response.message)
        calls = response.message.tool_calls
        signature = tuple(sorted((c.name, _normalised(c.arguments)) for c in calls))
        repeats = repeats + 1 if signature == previous else 0
        previous = signature
        results = await tools.call_all(response.message.tool_calls)
        deps.checkpoint("after_tools")
        convo.extend(results)
        new.extend(results)
        if tool_ctx.asked is not None:  # clarify: the question is this turn's answer
            question = Message(role="assistant", content=tool_ctx.asked.text())
            new.append(question)
            return question.content
    reply = (
        f"I stopped after {deps.settings.max_iterations} steps without a final answer. "
        "Say 'continue' to let me go on."
    )
    new.append(Message(role="assistant", content=reply))
    return reply


async def _take_images(deps: TurnDeps, entry: InboxEntry, user_model: str | None,
                       text: str) -> ImageIntake:
    try:
        name = deps.services.router.main(user_model).name
    except ConfigError:
        name = ""
    return await take_for_turn(entry.message, entry.user_id, text, store=deps.store,
                               settings=deps.settings, senders=deps.services.senders,
                               model_name=name)


def _final(deps: TurnDeps, response: ModelResponse, text: str, printed: bool,
           convo: list[Message], new: list[Message]) -> str:
    """The turn's answer in words: printed tool calls taken out, a cut-off answer ended cleanly
    with a note on the cap (the note is not kept in the history the model reads)."""
    note = ""
    if not text.strip():
        text = PRINTED_CALL_ONLY if printed else ""
    elif response.finish_reason == "length":
        text = end_cleanly(text)
        note = "\n\n" + cut_short_note(deps.settings.max_output_tokens)
    message = Message(role="assistant", content=text)
    convo.append(message)
    new.append(message)
    return (text or "(the model returned an empty answer)") + note


def _outside_content(convo: Sequence[Message]) -> set[str]:
    """Sources of untrusted content already in the history (earlier turns' tool results,
    a summary of them, an approved command's output): still in the model's context."""
    from core.security.untrusted import untrusted_sources

    found: set[str] = set()
    for message in convo:
        if message.role != "system" and message.content:
            found |= untrusted_sources(message.content)
    return found


def _normalised(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments or "{}"), sort_keys=True)
    except ValueError:
        return arguments.strip()
