"""The database connection dropping mid-transaction and on COMMIT (the Hrana server's fault
rules), S3 answering 503 and timing out after a write (moto behind iris_testing/fault_proxy.py):
chat turns over HTTP all answer once, nothing is stored twice, no model call is repeated
(issue 18, item 4; bench/cloud_faults.py prints the same runs as a table)."""

from __future__ import annotations

import pytest

from iris_testing.fault_runs import db_drops, s3_faults
from tests.fakes.hrana_fixtures import fresh_hrana_url
from tests.fakes.s3 import use_test_credentials

TURNS = 12


@pytest.mark.parametrize("where", ["transaction", "commit"])
def test_turns_survive_the_database_connection_dropping(hrana, iris_home, where):
    outcome = db_drops(iris_home, hrana.url, fresh_hrana_url(hrana), hrana.token, where=where,
                       turns=TURNS, rate=0.15, seed=3)
    print(f"\n{outcome.row()} {outcome.detail}")
    assert outcome.injected >= 2
    assert (outcome.answered_once, outcome.lost, outcome.doubled) == (TURNS, 0, 0)
    # an unknown outcome is resolved in place; only a turn its worker gave up on (the retry
    # window ran out) is run again, by the sweeper
    assert outcome.model_calls == TURNS + outcome.swept
    if where == "commit":
        assert "lost_commits" in outcome.detail


def test_turns_saving_skills_survive_s3_503s_and_timeouts(moto_s3, monkeypatch, iris_home):
    use_test_credentials(monkeypatch)
    bucket = moto_s3.create_bucket()
    outcome = s3_faults(iris_home, moto_s3.endpoint_url, bucket, turns=8, rate=0.25, seed=2)
    print(f"\n{outcome.row()} {outcome.detail}")
    assert "× timeout" in outcome.detail and not outcome.detail.startswith("0 ")
    assert outcome.injected >= 3
    assert (outcome.answered_once, outcome.lost, outcome.doubled) == (8, 0, 0)
    assert outcome.model_calls == 16  # the tool call and the answer, per turn
