"""Learning: after a busy turn (many tool calls) or when the user says the last task went well, a
side-model review decides whether to patch a skill that was used, patch a broader existing
skill, or create a new one, through the same ``skill_manage`` code path the agent uses."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.messages import Message

if TYPE_CHECKING:
    from core.contracts.hooks import HookContext
    from core.contracts.outcome import TurnOutcome


log = logging.getLogger("iris.skills.review")

MAX_STEPS = 4
TRANSCRIPT_CHARS = 14_000
RESULT_CHARS = 700
CANDIDATES = 5
NOTE = "post-turn review"

SYSTEM = """\
You maintain the skill library of Iris, an AI agent. A skill is a reusable procedure (SKILL.md: \
YAML front matter with name and description, then Markdown steps) that Iris loads the next time \
a similar task comes up. You are shown a task Iris just finished. Decide, in this order of \
preference:
1. A skill was used and proved wrong, incomplete or outdated: patch it (skill_manage \
action='patch' with the exact old passage and its replacement).
2. An existing skill covers this kind of task more broadly: patch it to add what was learned.
3. The task is a multi-step procedure likely to recur and no skill covers it: create one \
(action='create', the whole SKILL.md as content).
4. Otherwise (one-off work, trivial steps, facts about the user): change nothing.
A new skill needs a lowercase hyphenated name and a description saying what it does and when \
to use it, in the words a user would use. The body gives numbered steps with exact commands, \
then the pitfalls met and how they were solved, then how to check the result. Keep it general: \
no secrets, tokens or private details of this user. Call skill_manage at most twice, then \
answer in one sentence with what you did, or exactly NOTHING if nothing was worth saving."""

_PLEASED = re.compile(
    r"\b(thanks?|thank you|thx|ty|perfect|great|awesome|excellent|brilliant|nice( one| job)?|"
    r"well done|good job|it works|that works|worked|works now|exactly|nailed it|love it)\b",
    re.I,
)
_DISPLEASED = re.compile(
    r"\b(not|n't|no|never|didn|doesn|broken|wrong|fail(ed|s)?|error|but|still)\b", re.I
)
_SKILL_TAG = re.compile(r'<skill name="([a-z0-9-]+)">')


def sounds_pleased(text: str) -> bool:
    """A short message saying the previous task went well."""
    text = text.strip()
    return len(text) <= 200 and bool(_PLEASED.search(text)) and not _DISPLEASED.search(text)


@dataclass
class ReviewResult:
    reason: str
    calls: list[str] = field(default_factory=list)
    answer: str = ""


def render_transcript(messages: Sequence[Message], limit: int = TRANSCRIPT_CHARS) -> str:
    lines: list[str] = []
    for message in messages:
        if message.role == "user":
            lines.append(f"USER: {message.content}")
        elif message.role == "assistant":
            if message.content:
                lines.append(f"ASSISTANT: {message.content}")
            lines += [f"TOOL CALL {c.name}({c.arguments})" for c in message.tool_calls]
        elif message.role == "tool":
            content = message.content
            if len(content) > RESULT_CHARS:
                content = content[:RESULT_CHARS] + " […]"
            lines.append(f"TOOL RESULT {message.name or ''}: {content}")
    text = "\n".join(lines)
    if len(text) > limit:
        half = limit // 2
        text = text[:half] + "\n[… middle of the transcript left out …]\n" + text[-half:]
    return text


def skills_used(messages: Sequence[Message],
                tools: tuple[str, ...] = ("skill_view", "skill_manage")) -> list[str]:
    """Skills the messages invoked as ``/NAME`` or named in a call to one of ``tools``."""
    names: list[str] = []
    for message in messages:
        if message.role == "user":
            names += _SKILL_TAG.findall(message.content)
        for call in message.tool_calls:
            if call.name in tools:
                try:
                    name = call.parsed_arguments().get("name")
                except ValueError:
                    continue
                if isinstance(name, str):
                    names.append(name)
    return list(dict.fromkeys(names))


def _previous_exchange(ctx: HookContext) -> list[Message]:
    outcome = ctx.outcome
    stored = ctx.store.messages.for_session(ctx.user_id, outcome.session_id)
    earlier = [m.message for m in stored][: max(len(stored) - len(outcome.messages), 0)]
    starts = [i for i, m in enumerate(earlier) if m.role == "user"]
    return earlier[starts[-1]:] if starts else []


def _finished(outcome: TurnOutcome) -> bool:
    """The model gave a final answer (the turn did not stop at the step cap)."""
    answers = sum(1 for m in outcome.messages if m.role == "assistant")
    return sum(u.calls for u in outcome.usage) >= answers


def what_to_review(ctx: HookContext) -> tuple[str, list[Message]] | None:
    """(why, the messages to review), or None when this turn calls for no review."""
    outcome = ctx.outcome
    if outcome.status != "done" or outcome.command or not _finished(outcome):
        return None
    threshold = ctx.settings.skill_review_min_tool_calls
    if threshold and outcome.tool_calls >= threshold:
        return f"{outcome.tool_calls} tool calls", outcome.messages
    if sounds_pleased(ctx.entry.message.text):
        previous = _previous_exchange(ctx)
        calls = sum(len(m.tool_calls) for m in previous)
        if calls and not (threshold and calls >= threshold):  # busy turns were reviewed already
            return "the user said it went well", previous
    return None


def review_request(ctx: HookContext, messages: Sequence[Message]) -> list[Message]:
    from core.skills.library import SkillLibrary
    from core.skills.ranking import rank

    user_id = ctx.user_id
    library = SkillLibrary(ctx.store, ctx.settings)
    used = skills_used(messages)
    parts = [f"The task:\n{render_transcript(messages)}"]
    for name in used:
        try:
            text = library.snapshot(user_id, name).text()
        except Exception:  # a skill deleted or unreadable meanwhile
            continue
        usage = library.catalog.usage_of(user_id, name)
        if usage.failing:
            parts.append(f"Skill {name} keeps preceding failed turns ({usage.failed} went "
                         f"wrong, {usage.succeeded} well): it is likely wrong or outdated; fix "
                         "it if this task shows how.")
        parts.append(f"Skill {name} as it is now:\n{text}")
    task = " ".join(m.content for m in messages if m.role == "user")
    close = [r.entry for r in rank(library.entries(user_id), task)
             if r.score > 0 and r.entry.name not in used][:CANDIDATES]
    if close:
        listed = "\n".join(f"- {e.name}: {e.description}" for e in close)
        parts.append("Existing skills closest to this task (skill_view shows one):\n" + listed)
    parts.append("Decide now.")
    request = Message(role="user", content="\n\n".join(parts))
    return [Message(role="system", content=SYSTEM), request]


async def skill_review(hook: HookContext) -> ReviewResult | None:
    """The after-turn hook: run the review if this turn calls for one; returns what it did."""
    from core.contracts.toolkit import ToolContext, Toolset
    from core.security.untrusted import untrusted_sources
    from core.tools.skill_manage import SkillManage
    from core.tools.skill_view import SkillView

    found = what_to_review(hook)
    if found is None:
        return None
    reason, messages = found
    entry, outcome = hook.entry, hook.outcome
    result = ReviewResult(reason=reason)
    toolset = Toolset([SkillManage(), SkillView()])
    ctx = ToolContext(
        store=hook.store, settings=hook.settings, services=hook.services,
        user_id=entry.user_id, session_id=outcome.session_id, chat_key=entry.chat_key,
        platform=entry.message.platform, account=entry.message.account, inbox_id=entry.id,
        review_note=NOTE,
        # the turn read outside content: a skill written from it waits for the user
        tainted_by=set().union(*(untrusted_sources(m.content or "") for m in messages)),
    )
    model = hook.services.router.side()
    convo = review_request(hook, messages)
    for _ in range(MAX_STEPS):
        response = await model.complete(convo, toolset.specs())
        hook.store.usage.record(entry.user_id, response.usage, session_id=outcome.session_id,
                                inbox_id=None)
        convo.append(response.message)
        if not response.message.tool_calls:
            result.answer = response.message.content
            break
        results = await toolset.call_all(ctx, response.message.tool_calls)
        for call, reply in zip(response.message.tool_calls, results, strict=True):
            result.calls.append(f"{call.name} {call.arguments[:120]} → {reply.content[:200]}")
        convo.extend(results)
    log.info("skill review of inbox %s (%s): %s", entry.id, reason, result.calls or "no change")
    return result
