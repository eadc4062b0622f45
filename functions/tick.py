"""One scheduler tick: run due cron jobs (when ``functions.cron`` provides ``tick``), then sweep.

The Modal cron function and any other ticker call ``run_tick``; each step runs even when the
other failed, and a failure is raised after both so the run shows as failed in the logs.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from functions.runtime import Runtime
from functions.sweeper import SweepReport, sweep

log = logging.getLogger("iris.tick")

CRON_MODULE = "functions.cron"


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
    errors: list[str] = field(default_factory=list)


def cron_tick(module: str = CRON_MODULE) -> Callable[[Runtime], Any] | None:
    """``<module>.tick`` when that module exists, else None."""
    if importlib.util.find_spec(module) is None:
        return None
    tick = getattr(importlib.import_module(module), "tick", None)
    if tick is None:
        log.warning("%s has no tick(runtime); cron jobs are not run", module)
    return tick


async def run_tick(rt: Runtime, *, cron: Callable[[Runtime], Any] | None = None) -> TickReport:
    cron = cron or cron_tick()
    errors: list[str] = []
    cron_result: Any = None
    if cron is not None:
        try:
            cron_result = cron(rt)
            if inspect.isawaitable(cron_result):
                cron_result = await cron_result
        except Exception as exc:
            log.exception("cron tick failed")
            errors.append(f"cron: {type(exc).__name__}: {exc}")
    swept: SweepReport | None = None
    try:
        swept = await sweep(rt)
    except Exception as exc:
        log.exception("sweep failed")
        errors.append(f"sweep: {type(exc).__name__}: {exc}")
    report = TickReport(sweep=swept, cron=cron_result, cron_ran=cron is not None, errors=errors)
    if errors:
        raise TickFailed("; ".join(errors), report)
    return report
