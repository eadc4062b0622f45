"""Learning: does a skill help? After each turn, the skills it loaded (``skill_view``, or
``/NAME``) are judged by what followed:

- the turn itself went wrong — it failed, was stopped with ``/stop``, or hit a streak of
  ``ERROR_STREAK`` tool errors in a row: each loaded skill counts a failure at once;
- otherwise the verdict waits for the user's next message in that session: a correction or a
  retry ("that's wrong", "didn't work", "try again", or the same request again) counts a
  failure, anything else a success.

The counts (``skill_usage.succeeded`` / ``failed``) show in ``iris skills list`` and
``/skills``; a skill that keeps preceding failures (``SkillUsage.failing``) is ranked lower in
the index, named to the post-turn review, and listed by ``iris skills curate``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from core.messages import Message

if TYPE_CHECKING:
    from core.contracts.hooks import HookContext

ERROR_STREAK = 3
_CORRECTING = re.compile(
    r"^\s*(?:no|nope|wrong|stop)\b|\b(?:that'?s|this is|it'?s|you'?re|you are) (?:wrong|not "
    r"(?:right|it|what i)|incorrect|broken)|\b(?:did ?n[o']?t|does ?n[o']?t|does not|did not"
    r"|still (?:does ?n[o']?t|not)|won'?t|not) (?:work|working|help|fix)|\btry (?:it )?again\b"
    r"|\bstill (?:broken|failing|wrong|the same)\b|\b(?:redo|start over|that failed|it failed"
    r"|not what i (?:asked|wanted|meant))\b",
    re.I,
)


def loaded_skills(messages: Sequence[Message]) -> list[str]:
    """Skills the turn loaded: viewed with ``skill_view`` or invoked as ``/NAME``."""
    from core.learning.skill_review import skills_used

    return skills_used(messages, tools=("skill_view",))


def error_streak(messages: Sequence[Message]) -> int:
    """The longest run of tool results in a row that are errors."""
    longest = run = 0
    for message in messages:
        if message.role != "tool":
            continue
        run = run + 1 if message.content.lstrip().startswith("Error") else 0
        longest = max(longest, run)
    return longest


def corrects(text: str, previous_request: str | None) -> bool:
    """The user's message says the last answer was wrong, or asks the same thing again."""
    if _CORRECTING.search(text):
        return True
    if previous_request is None:
        return False
    same = " ".join(text.casefold().split())
    return len(same) > 12 and same == " ".join(previous_request.casefold().split())


def _requests(ctx: HookContext) -> tuple[str | None, str | None]:
    """The user's request before this turn's, and this turn's, as stored. The turn's messages
    are found by its inbox entry, not by position: a later turn may be stored already."""
    stored = ctx.store.messages.for_session(ctx.user_id, ctx.outcome.session_id)
    first = next((i for i, m in enumerate(stored) if m.inbox_id == ctx.entry.id), len(stored))
    earlier = [m.message.content for m in stored[:first] if m.message.role == "user"]
    own = stored[first].message if first < len(stored) else None
    return (earlier[-1] if earlier else None,
            own.content if own is not None and own.role == "user" else None)


async def skill_outcomes(ctx: HookContext) -> dict[str, list[str]] | None:
    """The after-turn hook: record outcomes; returns what it counted (for logs and tests).
    Its reads and writes run in the ``store`` lane, off the event loop."""
    from core.lanes import in_store_lane

    return await in_store_lane(ctx.user_id, _record_outcomes, ctx)


def _record_outcomes(ctx: HookContext) -> dict[str, list[str]] | None:
    outcome = ctx.outcome
    if outcome.command:  # a slash command is no verdict on anything
        return None
    catalog = ctx.store.skills
    user_id, session_id = ctx.user_id, outcome.session_id
    counted: dict[str, list[str]] = {"succeeded": [], "failed": []}

    def judge(names: list[str], text: str, previous: str | None) -> None:
        verdict = "failed" if corrects(text, previous) else "succeeded"
        catalog.record(user_id, names, verdict)
        counted[verdict] += names

    waiting = catalog.take_awaiting(user_id, session_id)
    loaded = loaded_skills(outcome.messages)
    if not waiting and not loaded:
        return counted
    previous, own = _requests(ctx)
    if waiting:
        judge(waiting, ctx.entry.message.text, previous)
    if loaded:
        if outcome.status != "done" or error_streak(outcome.messages) >= ERROR_STREAK:
            catalog.record(user_id, loaded, "failed")
            counted["failed"] += loaded
        elif (later := catalog.await_outcome(user_id, session_id, loaded,
                                             inbox_id=ctx.entry.id)) is not None:
            judge(loaded, later, own)
    return counted
