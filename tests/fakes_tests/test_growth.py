"""iris_testing.growth: a linear cost passes, a quadratic one fails, with the ratio it saw."""

import pytest

from iris_testing.growth import assert_linear, growth


def _linear(n: int) -> int:
    return sum(range(n * 200))


def _quadratic(n: int) -> int:
    return sum(i ^ j for i in range(n) for j in range(n))


def test_a_linear_cost_passes_and_reports_its_ratio():
    ratio = assert_linear(_linear, small=500, large=4000, scale=8, what="a sum")
    assert ratio < 24


def test_a_quadratic_cost_fails_naming_what_grew():
    with pytest.raises(AssertionError, match=r"pairs: 8x the input cost \d+\.\dx the time"):
        assert_linear(_quadratic, small=40, large=320, scale=8, what="pairs")


def test_growth_is_a_ratio_of_the_same_work_at_two_sizes():
    assert growth(_quadratic, 40, 320) > growth(_linear, 500, 4000)
