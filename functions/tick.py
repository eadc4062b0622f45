"""One scheduler tick: run due cron jobs, curate skills once a day, then sweep.

The Modal cron function and the emulator's ticker call ``run_tick``; each step runs even when
another failed, and a failure is raised after all of them so the run shows as failed in the logs.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.ids import new_id
from core.lanes import in_store_lane
from functions.runtime import Runtime
from functions.sweeper import SweepReport, sweep

log = logging.getLogger("iris.tick")

CURATE_LEASE = "tick:skills-curate"
CURATE_EVERY_SECONDS = 24 * 3600.0
SYSTEM_SCOPE = "system"


class TickFailed(Exception):
    """A step of the tick raised; the message names each failed step."""

    def __init__(self, message: str, report: TickReport) -> None:
        super().__init__(message)
        self.report = report


@dataclass(frozen=True)
class TickReport:
    sweep: SweepReport | None
    cron: Any = None
    cron_ran: bool = False
    curated: int | None = None  # skills whose status changed; None when not due this tick
    errors: list[str] = field(default_factory=list)


def curate_daily(rt: Runtime) -> int | None:
    """Mark unused skills stale / archived, at most once a day across all containers: the
    lease is taken for a day and never released, so the next tick after it expires runs it."""
    if not rt.store.leases.acquire(CURATE_LEASE, SYSTEM_SCOPE, new_id("tick"),
                                   CURATE_EVERY_SECONDS):
        return None
    from core.skills.curate import curate
    from core.skills.library import SkillLibrary

    library = SkillLibrary(rt.store, rt.settings)
    return len(curate(library, library.catalog.users_with_skills()))


async def run_tick(rt: Runtime, *, cron: Callable[[Runtime], Any] | None = None) -> TickReport:
    if cron is None:
        from functions.cron import tick

        cron = tick

    errors: list[str] = []
    cron_result: Any = None
    try:
        cron_result = cron(rt)
        if inspect.isawaitable(cron_result):
            cron_result = await cron_result
    except Exception as exc:
        log.exception("cron tick failed")
        errors.append(f"cron: {type(exc).__name__}: {exc}")
    curated: int | None = None
    try:
        curated = await in_store_lane(None, curate_daily, rt)
    except Exception as exc:
        log.exception("skill curation failed")
        errors.append(f"curate: {type(exc).__name__}: {exc}")
    swept: SweepReport | None = None
    try:
        swept = await sweep(rt)
    except Exception as exc:
        log.exception("sweep failed")
        errors.append(f"sweep: {type(exc).__name__}: {exc}")
    report = TickReport(sweep=swept, cron=cron_result, cron_ran=True, curated=curated,
                        errors=errors)
    if errors:
        raise TickFailed("; ".join(errors), report)
    return report
