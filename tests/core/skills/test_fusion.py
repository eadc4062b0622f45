"""The score mix of words and meaning: scales, the floor under which cosines say nothing, and
refusal of inputs that do not line up."""

from __future__ import annotations

import pytest

from core.skills.fusion import dense_scale, fuse, lexical_scale
from core.skills.ranking import rank
from tests.core.skills.test_index import LIBRARY


def test_lexical_scores_are_relative_to_the_best():
    assert lexical_scale([2.0, 1.0, 0.0]) == [1.0, 0.5, 0.0]
    assert lexical_scale([0.0, 0.0]) == [0.0, 0.0]
    assert lexical_scale([]) == []


def test_cosines_below_the_floor_say_nothing():
    assert dense_scale([0.12, 0.05, None]) == [0.0, 0.0, 0.0]
    scaled = dense_scale([0.65, 0.40, 0.10, None])
    assert scaled[0] == pytest.approx(1.0) and scaled[1] == pytest.approx(0.5)
    assert scaled[2:] == [0.0, 0.0]


def test_a_faint_best_match_gets_little_weight():
    faint = dense_scale([0.20, 0.16])
    assert faint[0] == pytest.approx(0.25) and faint[1] == pytest.approx(0.05)


def test_fuse_mixes_both_and_meaning_alone_can_win():
    fused = fuse([3.0, 0.0, 1.5], [0.2, 0.7, 0.25], weight=0.6)
    assert fused[1] > fused[0] > fused[2]
    assert fuse([3.0, 0.0], [0.9, 0.9], weight=0.0) == [1.0, 0.0]
    assert fuse([3.0, 0.0], [None, None]) == pytest.approx([0.4, 0.0])


def test_fuse_refuses_inputs_that_do_not_line_up():
    with pytest.raises(ValueError, match="one cosine per lexical score"):
        fuse([1.0, 2.0], [0.5])
    with pytest.raises(ValueError, match="between 0 and 1"):
        fuse([1.0], [0.5], weight=1.5)


def test_rank_with_cosines_orders_by_the_mix():
    cosines = {"pg-backup": 0.1, "nginx-reload": 0.1, "weekly-report": 0.62,
               "docker-cleanup": 0.3}
    ranked = rank(LIBRARY, "what happened this sprint", cosines)
    assert [r.entry.name for r in ranked[:2]] == ["weekly-report", "docker-cleanup"]
    assert ranked[-1].score == 0.0
    named = rank(LIBRARY, "restart nginx-reload please", {"docker-cleanup": 0.9})
    assert named[0].entry.name == "nginx-reload"
