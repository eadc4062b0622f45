"""Tokens, cost and cache hits per day, per model and per kind of call (chat, vision, speech,
transcription), shaped for the usage page's charts."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from core.store.usage import UsageTotals

if TYPE_CHECKING:
    from core.store import Store

DAYS = 30


@dataclass
class Day:
    day: str
    tokens: int = 0
    cache_read: int = 0
    cost: float = 0.0
    calls: int = 0
    height: float = 0.0  # 0..100, of the busiest day


@dataclass
class UsageView:
    days: list[Day]
    models: dict[str, UsageTotals]
    total: UsageTotals
    kinds: dict[str, UsageTotals] = field(default_factory=dict)
    peak: int = 0
    cost_known: bool = True
    notes: list[str] = field(default_factory=list)


def usage_view(store: Store, user_id: str, *, days: int = DAYS) -> UsageView:
    today = store.clock.utcnow().date()
    first = today - timedelta(days=days - 1)
    since = datetime(first.year, first.month, first.day, tzinfo=UTC).timestamp()
    by_day = {(first + timedelta(days=i)).isoformat(): Day((first + timedelta(days=i))
                                                          .isoformat()) for i in range(days)}
    cost_known = True
    for day, _model, totals in store.usage.daily(user_id, since=since):
        slot = by_day.get(day)
        if slot is None:
            continue
        slot.tokens += totals.total_tokens
        slot.cache_read += totals.cache_read_tokens
        slot.calls += totals.calls
        if totals.cost_usd is None:
            cost_known = False
        slot.cost += totals.cost_usd or 0.0
    peak = max((d.tokens for d in by_day.values()), default=0)
    for d in by_day.values():
        d.height = round(100 * d.tokens / peak, 1) if peak else 0.0
    return UsageView(days=list(by_day.values()), models=store.usage.by_model(user_id),
                     total=store.usage.totals(user_id), kinds=store.usage.by_kind(user_id),
                     peak=peak, cost_known=cost_known)
