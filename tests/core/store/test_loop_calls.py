"""``Database.loop_calls`` counts statements run on a thread that runs an event loop (issue 30):
the store lane's calls are not counted, a call made on the loop is."""

from __future__ import annotations

import asyncio

from core.lanes import in_store_lane
from core.store.db import Database


def test_calls_on_the_loop_are_counted_and_lane_calls_are_not(tmp_path):
    db = Database(f"file:{tmp_path / 'loop.db'}")
    db.scalar("SELECT 1")  # no loop here

    async def calls() -> None:
        await in_store_lane("u1", db.scalar, "SELECT 1")
        assert db.loop_calls == 0
        db.scalar("SELECT 1")  # on the loop's own thread

    asyncio.run(calls())
    assert db.loop_calls == 1
    db.close()
