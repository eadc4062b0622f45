"""The post-turn review: when it runs, what it sees, and that its writes go through skill_manage
(provenance agent, near-duplicates refused)."""

from __future__ import annotations

import pytest

from core.learning.skill_review import render_transcript, skills_used, sounds_pleased
from core.skills.library import SkillLibrary
from iris_testing.scripted_model import call as clock_call
from iris_testing.scripted_model import tool_calls
from tests.core.skills.conftest import PG, skill_md
from tests.core.skills.turns import call, send

BUSY = tool_calls(*[clock_call("clock", timezone=z) for z in
                    ("UTC", "Asia/Tokyo", "Europe/Paris", "America/Chicago", "Africa/Cairo")])


def review_requests(scripted):
    return [r for r in scripted.requests if r[0].content.startswith("You maintain the skill")]


def test_a_busy_turn_is_reviewed_and_the_review_creates_a_skill(runtime, scripted):
    skill = skill_md("world-clock", "Reports the current time in several timezones at once. "
                     "Use when the user asks what time it is in more than one city.",
                     "1. Call clock once per IANA timezone.\n2. Answer one line per city.\n")
    scripted.then(BUSY, "Here are the five times.",
                  call("skill_manage", action="create", name="world-clock", content=skill),
                  "Created world-clock.")
    entry = send(runtime, "what time is it in UTC, Tokyo, Paris, Chicago and Cairo?", "1")
    assert entry.reply == "Here are the five times."
    [request] = [r for r in review_requests(scripted) if len(r) == 2]
    task = request[1].content
    assert "USER: what time is it in UTC, Tokyo" in task
    assert 'TOOL CALL clock({"timezone": "Africa/Cairo"})' in task
    assert "TOOL RESULT clock: " in task
    library = SkillLibrary(runtime.store, runtime.settings)
    created = library.find(entry.user_id, "world-clock")
    assert (created.origin, created.provenance) == ("agent", "agent")
    assert library.versions(entry.user_id, "world-clock")[0].note == "post-turn review"
    assert runtime.store.usage.totals(entry.user_id).calls == 4


def test_a_quiet_turn_is_not_reviewed(runtime, scripted):
    scripted.then(clock_call_message(), "It is noon.")
    send(runtime, "what time is it?", "1")
    assert len(scripted.requests) == 2 and not review_requests(scripted)


def clock_call_message():
    return tool_calls(clock_call("clock", timezone="UTC"))


def test_the_user_saying_it_went_well_reviews_the_previous_task(runtime, scripted):
    scripted.then(tool_calls(clock_call("clock", timezone="UTC"),
                             clock_call("clock", timezone="Asia/Kolkata")),
                  "UTC 10:00, India 15:30.",
                  "Glad it helped!",
                  "NOTHING")
    send(runtime, "time in UTC and India?", "1")
    assert not review_requests(scripted)
    entry = send(runtime, "perfect, thanks!", "2")
    assert entry.reply == "Glad it helped!"
    [request] = review_requests(scripted)
    assert "USER: time in UTC and India?" in request[1].content
    assert "perfect, thanks" not in request[1].content
    assert "ASSISTANT: UTC 10:00, India 15:30." in request[1].content


def test_the_review_patches_instead_of_duplicating(runtime, scripted, store):
    from core.skills.manage import SkillEditor

    user = store.users.for_account("http:alice")
    SkillEditor(SkillLibrary(store, runtime.settings), user).create("pg-backup", PG)
    twin = skill_md("postgres-dump", "Dumps a PostgreSQL database with pg_dump and restores it "
                    "with pg_restore. Use when the user wants a Postgres backup or a restore.")
    scripted.then(
        BUSY, "Backed up.",
        call("skill_manage", action="create", name="postgres-dump", content=twin),
        call("skill_manage", action="patch", name="pg-backup",
             old_string="2. `pg_restore -d mydb mydb.dump`",
             new_string="2. `pg_restore -d mydb mydb.dump`\n3. Check with `pg_restore -l`"),
        "Patched pg-backup.",
    )
    send(runtime, "back up my postgres database please", "1")
    review = review_requests(scripted)
    assert "Existing skills closest to this task" in review[0][1].content
    assert "- pg-backup: Backs up a PostgreSQL" in review[0][1].content
    refusal = review[1][-1]
    assert refusal.role == "tool" and "Patch 'pg-backup' instead" in refusal.content
    library = SkillLibrary(store, runtime.settings)
    assert library.find(user, "postgres-dump") is None
    assert "pg_restore -l" in library.snapshot(user, "pg-backup").text()
    assert library.find(user, "pg-backup").usage.patched == 1


@pytest.mark.parametrize(("text", "pleased"), [
    ("thanks!", True), ("Perfect, that works", True), ("great job", True),
    ("thanks but it is still broken", False), ("that didn't work", False),
    ("no, wrong timezone", False), ("what time is it", False), ("thanks " * 60, False),
])
def test_sounds_pleased(text, pleased):
    assert sounds_pleased(text) is pleased


def test_transcript_and_used_skills():
    from core.messages import Message

    messages = [
        Message(role="user", content='The user invoked the skill /git-workflow.\n'
                '<skill name="git-workflow">...</skill>\n\ncommit this'),
        call("skill_view", name="pg-backup"),
        Message(role="tool", content="x" * 2000, name="skill_view", tool_call_id="c"),
    ]
    assert skills_used(messages) == ["git-workflow", "pg-backup"]
    text = render_transcript(messages)
    assert "TOOL RESULT skill_view: " + "x" * 700 + " […]" in text
    assert len(render_transcript(messages * 40, limit=3000)) < 3100
