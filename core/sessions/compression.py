"""Context compression: keep a long session going within the model's context window.

When the prompt passes ``compression_threshold`` of the window: first old tool outputs are
shortened (in the prompt only); if that is not enough, the older middle of the conversation is
replaced in the prompt by a structured summary written by the side model, updated on every later
compression. The summarised messages are flagged ``compacted`` and stay stored and searchable.
A failed summary leaves the prompt exactly as it was and backs off before trying again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from core.contracts.prompt import conversation_tail
from core.lanes import blocking, in_store_lane
from core.messages import Message, Usage
from core.sessions.summarise import summarise

if TYPE_CHECKING:
    from core.config import Settings
    from core.store import Store
    from core.store.compaction import Summary
    from core.store.sessions import StoredMessage

log = logging.getLogger("iris.compression")

DEFAULT_WINDOW = 32_768
CHARS_PER_TOKEN = 3.5
TAIL_SHARE = 0.35
HEAD_SHARE = 0.15
HEAD_MESSAGES = 4
KEEP_RECENT_TOOL_OUTPUTS = 4
SHORT_TOOL_OUTPUT = 600
BACKOFF_BASE = 300.0
BACKOFF_MAX = 6 * 3600.0
SUMMARY_HEADER = (
    "[Context summary: the earlier part of this conversation ({count} messages) was compacted. "
    "It is summarised below; the full messages remain stored and can be found with "
    "session_search. This is background, not a new request.]\n\n"
)


def estimate_tokens(messages: Sequence[Message]) -> int:
    """A deliberately generous token estimate (no tokenizer needed)."""
    chars = 0
    for m in messages:
        chars += len(m.content) + sum(len(c.name) + len(c.arguments) + 20 for c in m.tool_calls)
    return int(chars / CHARS_PER_TOKEN) + 4 * len(messages)


async def context_window(model: Any, settings: Settings) -> int:
    """The model's input window: the ``context_window`` setting, else what the model or
    litellm's model table says, else 32k tokens."""
    if settings.context_window:
        return settings.context_window
    declared = getattr(model, "context_window", None)
    if isinstance(declared, int) and declared > 0:
        return declared
    lookup = getattr(model, "known_window", None)
    if callable(lookup):
        found = await blocking("io", f"model:{model.name}", lookup,
                               what="looking up the context window")
        if isinstance(found, int) and found > 0:
            return found
    return DEFAULT_WINDOW


def shorten_tool_outputs(messages: list[Message], keep_recent: int) -> list[Message]:
    """Clip tool results older than the last ``keep_recent`` messages (prompt only)."""
    cut = len(messages) - keep_recent
    out = []
    for i, m in enumerate(messages):
        if i < cut and m.role == "tool" and len(m.content) > SHORT_TOOL_OUTPUT:
            kept = m.content[: SHORT_TOOL_OUTPUT - 100] + " … " + m.content[-80:]
            note = f"\n[tool output shortened from {len(m.content)} characters for the prompt]"
            m = Message(role="tool", content=kept + note, tool_call_id=m.tool_call_id,
                        name=m.name)
        out.append(m)
    return out


def _mark_outside_content(text: str, previous: Summary | None,
                          middle: Sequence[StoredMessage]) -> str:
    """A summary of untrusted content (tool results, or a summary that held them) is
    untrusted too: wrapped, so the turn still knows outside content is in its context."""
    from core.security.untrusted import untrusted_sources, wrap_untrusted

    sources = untrusted_sources(previous.content) if previous is not None else set()
    for stored in middle:
        sources |= untrusted_sources(stored.message.content or "")
    if not sources:
        return text
    return wrap_untrusted("summary of " + ", ".join(sorted(sources)), text)


def summary_message(summary: Summary) -> Message:
    return Message(
        role="user",
        content=SUMMARY_HEADER.format(count=summary.compacted_count) + summary.content,
    )


def assemble(stored: Sequence[StoredMessage], summary: Summary | None) -> list[Message]:
    """History for the prompt: uncompacted messages with the summary where the compacted
    ones were."""
    if summary is None:
        return conversation_tail(stored)
    head = [m for m in stored if m.id < summary.first_message_id]
    rest = [m for m in stored if m.id > summary.first_message_id]
    return [*conversation_tail(head), summary_message(summary), *conversation_tail(rest)]


@dataclass(frozen=True)
class Plan:
    middle: list[StoredMessage]
    head: list[StoredMessage]
    tail: list[StoredMessage]


def _starts_exchange(messages: Sequence[StoredMessage], index: int) -> bool:
    return messages[index].message.role == "user"


def plan(
    live: list[StoredMessage], summary: Summary | None, budget: int, *, force: bool
) -> Plan | None:
    """Split the uncompacted messages into a protected head (the first exchange, unless a
    summary exists or it is large), the middle to summarise, and a recent tail that starts at a
    user message and fits a share of the budget."""
    if len(live) < 3:
        return None
    head: list[StoredMessage] = []
    if summary is None:
        for m in live[:HEAD_MESSAGES]:
            head.append(m)
            if m.message.role == "assistant" and not m.message.tool_calls:
                break
        if estimate_tokens([m.message for m in head]) > HEAD_SHARE * budget:
            head = []
    else:
        head = [m for m in live if m.id < summary.first_message_id]
    body = live[len(head):]
    tail_budget = TAIL_SHARE * budget
    start = len(body)
    used = 0
    for i in range(len(body) - 1, -1, -1):
        used += estimate_tokens([body[i].message])
        if used > tail_budget:
            break
        if _starts_exchange(body, i):
            start = i
    if force:
        users = [i for i in range(len(body)) if _starts_exchange(body, i)]
        start = max(start, users[-2]) if len(users) >= 2 else start
    if start == len(body):
        users = [i for i in range(len(body)) if _starts_exchange(body, i)]
        start = users[-1] if users else len(body)
    middle = body[:start]
    if not middle or (not force and len(middle) < 2):
        return None
    return Plan(middle=middle, head=head, tail=body[start:])


def backoff_seconds(failures: int) -> float:
    return cast("float", min(BACKOFF_MAX, BACKOFF_BASE * 2 ** max(0, failures - 1)))


@dataclass(frozen=True)
class Outcome:
    convo: list[Message]
    compacted: int = 0
    summary: Summary | None = None
    error: str | None = None
    before_tokens: int = 0
    after_tokens: int = 0
    usage: list[Usage] = field(default_factory=list)


def _history(store: Store, user_id: str, session_id: str,
             limit: int) -> tuple[list[StoredMessage], Summary | None, int | None]:
    """The session's last ``limit`` messages, its latest summary, and (when the tail is full)
    how many live messages it has: one trip to the store lane."""
    stored = store.messages.tail(user_id, session_id, limit=limit)
    summary = store.compaction.latest(user_id, session_id)
    live = store.compaction.live_count(user_id, session_id) if len(stored) >= limit else None
    return stored, summary, live


def _record_failure(store: Store, user_id: str, session_id: str, error: str) -> Any:
    failures = store.compaction.state(user_id, session_id).failures + 1
    return store.compaction.record_failure(
        user_id, session_id, error, retry_at=store.clock.now() + backoff_seconds(failures))


async def fit_context(
    store: Store, settings: Settings, router: Any, model: Any, user_id: str, session_id: str,
    system: Message, user_message: Message | None, *, force: bool = False,
) -> Outcome:
    """The prompt for the next model call: [system, history (compressed if needed), message]."""
    tail_messages = [user_message] if user_message is not None else []
    stored, summary, live_count = await in_store_lane(
        user_id, _history, store, user_id, session_id, settings.history_messages)
    convo = [system, *assemble(stored, summary), *tail_messages]
    before = estimate_tokens(convo)
    budget = int(await context_window(model, settings) * settings.compression_threshold)
    overflow = live_count is not None and live_count > len(stored)
    if not force and not overflow and before <= budget:
        return Outcome(convo, before_tokens=before, after_tokens=before)
    shortened = shorten_tool_outputs(convo, KEEP_RECENT_TOOL_OUTPUTS)
    if not force and not overflow and estimate_tokens(shortened) <= budget:
        return Outcome(shortened, before_tokens=before, after_tokens=estimate_tokens(shortened))
    state = await in_store_lane(user_id, store.compaction.state, user_id, session_id)
    if not force and state.retry_at is not None and state.retry_at > store.clock.now():
        return Outcome(convo, error=f"backing off after: {state.last_error}",
                       before_tokens=before, after_tokens=before)
    live = await in_store_lane(user_id, store.messages.tail, user_id, session_id,
                               limit=1_000_000)
    chosen = plan(live, summary, budget, force=force)
    if chosen is None:
        return Outcome(convo, before_tokens=before, after_tokens=before)
    side = router.side()
    usage: list[Usage] = []
    try:
        text = await summarise(side, previous=summary, messages=chosen.middle, usage=usage)
    except Exception as exc:
        failed = await in_store_lane(user_id, _record_failure, store, user_id, session_id,
                                     f"{type(exc).__name__}: {exc}")
        log.warning("summary for session %s failed (%d in a row): %s", session_id,
                    failed.failures, exc)
        return Outcome(convo, error=str(exc) or type(exc).__name__, before_tokens=before,
                       after_tokens=before, usage=usage)
    text = _mark_outside_content(text, summary, chosen.middle)
    new_summary = await in_store_lane(
        user_id, store.compaction.compact, user_id, session_id, [m.id for m in chosen.middle],
        text, model=getattr(side, "name", None),
    )
    history = [
        *conversation_tail(chosen.head), summary_message(new_summary),
        *conversation_tail(chosen.tail),
    ]
    result = [system, *history, *tail_messages]
    if estimate_tokens(result) > budget:
        result = shorten_tool_outputs(result, KEEP_RECENT_TOOL_OUTPUTS)
    if estimate_tokens(result) > budget:
        result = shorten_tool_outputs(result, 0)
    return Outcome(result, compacted=len(chosen.middle), summary=new_summary,
                   before_tokens=before, after_tokens=estimate_tokens(result), usage=usage)
