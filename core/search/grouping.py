"""Hits grouped per session with their neighbouring turns, rendered for the model."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from core.search.engine import Hit

if TYPE_CHECKING:
    from core.store import Store
    from core.store.sessions import StoredMessage

HIT_CHARS = 700
NEIGHBOUR_CHARS = 300


@dataclass
class SessionGroup:
    session_id: str
    title: str | None
    external_id: str | None
    started_at: float
    last_active_at: float
    message_count: int
    hits: list[Hit] = field(default_factory=list)
    windows: list[list[StoredMessage]] = field(default_factory=list)

    @property
    def best(self) -> float:
        return max(h.score for h in self.hits)


def group_hits(
    store: Store, user_id: str, hits: Sequence[Hit], *, context: int = 1
) -> list[SessionGroup]:
    """Hits grouped per session (best session first), each group with the matching messages and
    ``context`` messages on either side of each, in conversation order."""
    groups: dict[str, SessionGroup] = {}
    meta = store.search.session_meta(user_id, sorted({h.session_id for h in hits}))
    for hit in hits:
        group = groups.get(hit.session_id)
        if group is None:
            info: dict[str, Any] = dict(meta.get(hit.session_id, {}))
            group = groups[hit.session_id] = SessionGroup(
                session_id=hit.session_id, title=info.get("title"),
                external_id=info.get("external_id"),
                started_at=info.get("started_at", hit.created_at),
                last_active_at=info.get("last_active_at", hit.created_at),
                message_count=info.get("message_count", 0),
            )
        group.hits.append(hit)
    for group in groups.values():
        windows = [
            store.search.around(
                user_id, group.session_id, hit.message_id, before=context, after=context
            )
            for hit in sorted(group.hits, key=lambda h: h.message_id)
        ]
        group.windows = _merge(windows)
    return sorted(groups.values(), key=lambda g: -g.best)


def _merge(windows: list[list[StoredMessage]]) -> list[list[StoredMessage]]:
    """Overlapping windows joined into one run of messages."""
    merged: list[list[StoredMessage]] = []
    for window in windows:
        if merged and window and merged[-1] and window[0].id <= merged[-1][-1].id:
            known = {m.id for m in merged[-1]}
            merged[-1].extend(m for m in window if m.id not in known)
        elif window:
            merged.append(list(window))
    return merged


def when(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M UTC")


def clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def render_message(stored: StoredMessage, *, hit: Hit | None, current: str | None) -> str:
    m = stored.message
    if hit is not None:
        body = hit.snippet if len(hit.content) > HIT_CHARS else clip(hit.content, HIT_CHARS)
    else:
        body = clip(m.content, NEIGHBOUR_CHARS)
    calls = "".join(f" → {c.name}({clip(c.arguments, 200)})" for c in m.tool_calls)
    label = m.role if m.role != "tool" else f"tool {m.name or ''}".strip()
    marker = "»" if hit is not None else " "
    flags = " (compacted)" if stored.compacted else ""
    return f"{marker} #{stored.id} {when(stored.created_at)} {label}{flags}: {body}{calls}"


def render_groups(groups: Sequence[SessionGroup], *, current_session: str | None) -> str:
    parts = []
    for group in groups:
        title = f'"{group.title}"' if group.title else "(untitled)"
        now_tag = " [this session]" if group.session_id == current_session else ""
        external = f" (imported as {group.external_id})" if group.external_id and \
            group.external_id != group.session_id else ""
        lines = [
            f"Session {group.session_id}{external} {title}{now_tag}: "
            f"{when(group.started_at)} → {when(group.last_active_at)}, "
            f"{group.message_count} messages"
        ]
        hits = {h.message_id: h for h in group.hits}
        for i, window in enumerate(group.windows):
            if i:
                lines.append("   …")
            lines.extend(
                render_message(m, hit=hits.get(m.id), current=current_session) for m in window
            )
        parts.append("\n".join(lines))
    return "\n\n".join(parts)

