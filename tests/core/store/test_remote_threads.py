"""A remote database serves threads side by side (issue 30): one link per thread
(core/store/remote_links.py), so one thread's hung round trip holds up no other thread."""

from __future__ import annotations

import threading

from core.store.db import Database
from iris_testing.waiting import wait_until
from tests.fakes.hrana_fixtures import fresh_hrana_url
from tests.fakes.hrana_server import FaultRule

STUCK = "stuck_7d1e"


def test_a_hung_round_trip_holds_up_no_other_thread(hrana):
    db = Database(fresh_hrana_url(hrana), hrana.token, retry_for=5.0)
    db.execute("CREATE TABLE t (x INTEGER)")
    hanging = hrana.stats().get("fault_hang", 0)
    hrana.inject(FaultRule("hang", match=STUCK, seconds=600.0, times=1))
    stuck_done: list[object] = []

    def stuck() -> None:
        try:
            stuck_done.append(db.scalar(f"SELECT 1 AS {STUCK}"))
        except Exception as exc:  # the server is reset under it at the end
            stuck_done.append(exc)

    threading.Thread(target=stuck, daemon=True).start()
    try:
        wait_until(
            lambda: hrana.stats().get("fault_hang", 0) > hanging,
            "the stuck thread's read to hang at the server",
        )
        with db.transaction():  # this thread: another link, its own transaction
            db.execute("INSERT INTO t (x) VALUES (1)")
        assert db.scalar("SELECT count(*) FROM t") == 1
        assert stuck_done == []  # still hung: nothing above waited for it
        assert db.remote_counters()["round_trips"] > 0
    finally:
        hrana.inject()
