"""``clock``: the current date and time in a timezone."""

from __future__ import annotations

from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, Field

from core.contracts.toolkit import Tool, ToolContext
from core.errors import ToolRetry


class ClockArgs(BaseModel):
    timezone: str | None = Field(
        default=None,
        description="IANA name; default: the user's.",
    )


class Clock(Tool):
    name = "clock"
    description = "Get the current date, time and weekday in a timezone."
    Args = ClockArgs

    async def run(self, ctx: ToolContext, args: ClockArgs) -> str:
        name = args.timezone or ctx.settings.timezone
        try:
            zone = ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            raise ToolRetry(
                f"unknown timezone {name!r}; use an IANA name like 'Asia/Tokyo'"
            ) from None
        now = ctx.store.clock.utcnow().astimezone(zone)
        return f"{now:%Y-%m-%d %H:%M:%S} {now.tzname()} ({now:%A}), timezone {name}"
