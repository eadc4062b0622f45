"""Each lane's limits from the settings (core.lanes.limits_from)."""

from __future__ import annotations

from core.config import Settings
from core.lanes import LANES, limits_from


def test_the_store_lane_has_twice_the_threads_over_a_remote_database_only(tmp_path):
    for url in ("libsql://db-org.turso.io", "https://db.example", "http://127.0.0.1:8080"):
        remote = limits_from(Settings(home=tmp_path, db_url=url, pool_threads=16,
                                      pool_per_user=2))
        assert remote["store"].threads == 32
        assert remote["store"].per_user == 2  # fairness per user unchanged
        assert remote["prompt"].threads == 16
    local = limits_from(Settings(home=tmp_path, db_url="file:/tmp/iris.db", pool_threads=16))
    assert {lane: local[lane].threads for lane in LANES} == {
        **{lane: 16 for lane in LANES}, "skills": 4}
