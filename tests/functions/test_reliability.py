"""Nothing lost, nothing doubled, nothing out of order: many webhook deliveries from every
platform with repeats (iris_testing/webhook_load.py; bench/webhook_reliability.py runs
1,000), and a worker killed at every step of a turn."""

import pytest

from iris_testing.crash_platform_worker import STEPS, crash_and_recover
from iris_testing.platform_stack import platform_stack
from iris_testing.webhook_load import JWT_PLATFORMS, PLATFORMS, run

pytestmark = pytest.mark.process  # its tools run shells or processes


def test_100_deliveries_over_10_chats_with_repeats(iris_home):
    with platform_stack(iris_home) as stack:
        report = run(stack, messages=100, chats=10, repeat_share=0.2, timeout=60)
    print(report.line())
    assert report.deliveries > 110  # the repeats were sent
    assert (report.lost, report.doubled, report.out_of_order) == (0, 0, 0)
    assert report.statuses == {200: report.deliveries}


def test_teams_and_google_chat_deliveries_with_repeats(iris_home):
    with platform_stack(iris_home, jwt_platforms=True) as stack:
        report = run(stack, messages=60, chats=6, repeat_share=0.3, timeout=60,
                     platforms=JWT_PLATFORMS)
    print(report.line())
    assert report.deliveries > 66  # the repeats were sent
    assert (report.lost, report.doubled, report.out_of_order) == (0, 0, 0)
    assert set(report.statuses) == {200, 202}  # Google Chat's empty JSON, Teams' 202


# Every platform once, the steps taking turns so each step is hit at least once
# (bench/webhook_reliability.py --crash runs all 60).
ALL = PLATFORMS + JWT_PLATFORMS


@pytest.mark.parametrize(("step", "platform"), [
    (STEPS[i % len(STEPS)], platform) for i, platform in enumerate(ALL)
])
def test_a_worker_killed_at_any_step_completes_once_and_replies_once(iris_home, step, platform):
    with platform_stack(iris_home, jwt_platforms=platform in JWT_PLATFORMS) as stack:
        result = crash_and_recover(stack, step, platform)
    committed = step in ("before_delivery", "after_delivery")
    expected = "child answer" if committed else "re: crash me"  # else the turn ran again
    assert (result.status, result.reply) == ("done", expected)
    assert result.sent == [expected]
    assert (result.deliveries, result.delivery_status) == (1, "sent")
