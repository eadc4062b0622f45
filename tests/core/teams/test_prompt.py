"""The team notes block in a member's prompt stays within ``team_notes_prompt_tokens`` however
many teams and notes there are, keeps the newest notes, counts the rest (still live), and the
skill index gives up what the block takes."""

from __future__ import annotations

import pytest

from core.contracts.prompt import PromptInputs
from core.skills.index import estimate_tokens
from core.teams.notes import NOTE_LIMIT, write_note
from core.teams.prompt import (
    render_team_notes,
    skills_after_team_notes,
    team_notes_section,
    team_notes_tokens,
)

NOTE = (
    "Deploys go out on Tuesdays after the 10:00 stand-up; staging listens on port 6543 and "
    "the rota is in the ops wiki under Rotations, next to the escalation list. "
)


def full_team(store, lead: str, member: str, name: str) -> str:
    team = store.teams.create(lead, name)
    store.teams.add(lead, team.id, member)
    for i in range(12):
        write_note(store, lead, team.id, f"{name} note {i}. {NOTE}"[:NOTE_LIMIT])
    return team.id


def inputs_for(store, settings, user: str) -> PromptInputs:
    session = store.sessions.start(user, "c", "http")
    return PromptInputs(
        store=store,
        settings=settings,
        user_id=user,
        session=session,
        platform="http",
        first_message="deploy the staging database",
    )


@pytest.mark.parametrize("teams", [1, 3, 40])
def test_the_team_block_stays_within_its_cap(store, teams):
    lead, carol = store.users.for_account("http:lead"), store.users.for_account("http:carol")
    for t in range(teams):
        full_team(store, lead, carol, f"team-{t:02d}")
    cap = 400
    block = render_team_notes(store, carol, cap)
    assert block is not None
    assert estimate_tokens(block) <= cap
    live = sum(len(store.team_notes.live(carol, team.id)) for team, _ in store.teams.of_user(carol))
    if teams == 1:  # the newest notes are shown, the older ones counted, none dropped
        assert "team-00 note 11." in block and "team-00 note 0." not in block
        shown = block.count("\n- [")
        assert f"(+{live - shown} older notes: /team notes team-00)" in block
        assert block.index("note 10.") < block.index("note 11.")  # shown oldest first
    if teams == 40:  # as many teams as have room for a note, the rest counted
        assert "(+34 more teams: /team lists them" in block
        assert "### team-05\n- [http:lead] team-05 note 11." in block


def test_the_skill_index_gives_up_what_the_team_block_takes(store, settings):
    settings = settings.model_copy(update={"skills_index_tokens": 800})  # the 5 bundled: ~450
    lead, carol = store.users.for_account("http:lead"), store.users.for_account("http:carol")
    alone = inputs_for(store, settings, carol)
    assert team_notes_tokens(alone) == 0
    index_alone = skills_after_team_notes(alone) or ""
    full_team(store, lead, carol, "eng")
    teamed = inputs_for(store, settings, carol)
    block = team_notes_section(teamed) or ""
    index_teamed = skills_after_team_notes(teamed) or ""
    assert block.startswith("## Team notes") and "[http:lead]" in block
    together = estimate_tokens(block) + estimate_tokens(index_teamed)
    assert together <= settings.skills_index_tokens
    assert index_teamed.count("\n- ") < index_alone.count("\n- ")
