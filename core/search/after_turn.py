"""Vectors for a turn's new messages, computed after the turn is committed (never on the
webhook ack path). ``search_indexer`` says where: ``process`` hands the session to the
runtime's indexing child process (core/search/indexer.py) and returns at once; ``inline``
embeds in this process on the blocking lane (also what ``process`` does where hooks run
without a runtime's indexer); ``off`` leaves it to searches and ``iris sessions reindex``.
numpy and the model are imported only where the embedding runs."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from core.lanes import blocking

if TYPE_CHECKING:
    from core.contracts.hooks import HookContext

log = logging.getLogger("iris.search.after_turn")

AFTER_TURN_LIMIT = 64  # messages of the session still without vectors, newest first


async def embed_after_turn(ctx: HookContext) -> None:
    """An ``AfterTurn`` hook: have the session's messages that have no vectors yet (this
    turn's, and any an earlier failed run left behind) embedded."""
    outcome = ctx.outcome
    mode = ctx.settings.search_indexer
    if not outcome.messages or mode == "off":
        return
    if mode == "process" and ctx.indexer is not None:
        ctx.indexer.request(ctx.user_id, outcome.session_id)
        return
    from core.search import embed

    if not embed.available():
        return
    written = await blocking(
        "prompt", ctx.user_id, embed.backfill, ctx.store, ctx.user_id,
        session_id=outcome.session_id, limit=AFTER_TURN_LIMIT, what="embedding messages",
    )
    log.debug("embedded %d messages of session %s", written, outcome.session_id)
