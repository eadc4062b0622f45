"""Telegram answering 429 with ``parameters.retry_after``, Slack answering ``ratelimited``, the
model provider answering 529 overloaded or stalling mid-answer, the Modal spawn failing: every
message is answered once or told plainly that it failed, nothing is sent twice, and what was
left is finished by the sweeper (issue 18, item 4; bench/cloud_faults.py prints the table)."""

from __future__ import annotations

import pytest

from iris_testing.fault_runs_platforms import modal_spawn, model_faults, platform_rate_limit

TURNS = 6


@pytest.mark.parametrize("platform", ["telegram", "slack"])
def test_a_rate_limited_reply_waits_retry_after_then_goes_once(iris_home, platform):
    outcome = platform_rate_limit(iris_home, platform, turns=TURNS, retry_after=30)
    print(f"\n{outcome.row()} {outcome.detail}")
    assert outcome.detail.startswith("0 sent")  # nothing before retry_after
    assert (outcome.answered_once, outcome.lost, outcome.doubled) == (TURNS, 0, 0)
    assert outcome.swept == TURNS


def test_overloaded_and_stalled_model_calls_are_retried_or_reported(iris_home):
    outcome = model_faults(iris_home, turns=10, rate=0.3, seed=4)
    print(f"\n{outcome.row()} {outcome.detail}")
    assert "× 529" in outcome.detail and not outcome.detail.startswith("0 ")
    assert "0 × stalled" not in outcome.detail
    assert (outcome.lost, outcome.doubled) == (0, 0)
    assert outcome.answered_once + outcome.told_failed == 10
    assert outcome.answered_once >= 5
    assert outcome.told_failed and "Try again" in outcome.detail  # in plain words:
    assert "litellm" not in outcome.detail and "Exception" not in outcome.detail


def test_a_refused_spawn_leaves_the_message_for_the_sweeper(iris_home):
    outcome = modal_spawn(iris_home, turns=TURNS, failing=2)
    print(f"\n{outcome.row()} {outcome.detail}")
    assert outcome.detail.startswith("2 entries waited")
    assert (outcome.answered_once, outcome.lost, outcome.doubled) == (TURNS, 0, 0)
    assert outcome.swept == 2
