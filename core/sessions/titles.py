"""Session titles: after a session's first exchange the side model names it (or, for a model
too small for it, the first words of the first message do)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from core.sessions.summarise import make_title

if TYPE_CHECKING:
    from core.contracts.hooks import HookContext

log = logging.getLogger("iris.titles")

TRY_WHILE_USER_MESSAGES = 3  # later turns stop retrying a title the side model failed to give
TITLE_WORDS = 6
TITLE_CHARS = 60


def first_words(text: str) -> str:
    """A title from a message itself: its first few words on one line, "…" when cut."""
    words = text.split()
    title = " ".join(words[:TITLE_WORDS])
    if len(title) > TITLE_CHARS:
        title = title[: TITLE_CHARS - 1].rstrip()
    cut = len(words) > TITLE_WORDS or len(title) < len(" ".join(words[:TITLE_WORDS]))
    return title + "…" if cut and title else title


async def title_session(ctx: HookContext) -> None:
    """An ``AfterTurn`` hook: give an untitled session a short title from its first exchange."""
    outcome = ctx.outcome
    if not ctx.settings.session_titles:
        return
    if outcome.status != "done" or outcome.command or not outcome.messages:
        return
    store, user_id = ctx.store, ctx.user_id
    session = store.sessions.get(user_id, outcome.session_id)
    if session.title:
        return
    stored = store.messages.for_session(user_id, session.id)
    users = [m for m in stored if m.message.role == "user"]
    if not users or len(users) > TRY_WHILE_USER_MESSAGES:
        return
    if not any(m.message.role == "assistant" and m.message.content for m in stored):
        return
    if not ctx.settings.session_titles_by_model:
        named = first_words(users[0].message.content)
        if named:
            store.transcripts.set_title(user_id, session.id, named, only_if_empty=True)
        return
    first = [m.message for m in stored[:6]]
    try:
        model = ctx.services.router.side()
        title, usage = await make_title(model, first)
    except Exception as exc:
        log.warning("no title for session %s: %s", session.id, exc)
        return
    if usage is not None:
        store.usage.record(user_id, usage, session_id=session.id, inbox_id=None)
    if title:
        store.transcripts.set_title(user_id, session.id, title, only_if_empty=True)
