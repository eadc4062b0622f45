"""Skill outcomes through the real worker path with the scripted model: a tool error streak or
a correction counts against the skill the turn loaded; a skill that keeps preceding failures
is ranked lower, named to the post-turn review and listed by curation."""

from __future__ import annotations

import asyncio

import pytest

from core.learning.skill_outcomes import corrects, error_streak, loaded_skills
from core.messages import Message
from core.skills.curate import failing
from core.skills.importer import import_skills
from core.skills.index import index_for, usage_line
from core.skills.library import SkillLibrary
from tests.core.skills.conftest import PG, skill_md
from tests.core.skills.turns import call, send

DUMP = skill_md("db-dump", "Dumps a PostgreSQL database to a file. Use when the user asks "
                "for a database backup or a dump of Postgres data.", "1. `pg_dump`\n")


@pytest.fixture
def skills(runtime, tmp_path):
    for name, text in (("pg-backup", PG), ("db-dump", DUMP)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "SKILL.md").write_text(text)
    library = SkillLibrary(runtime.store, runtime.settings)
    user = runtime.store.users.for_account("http:alice")
    import_skills(library, user, str(tmp_path))
    return library, user


@pytest.mark.parametrize(("text", "verdict"), [
    ("that's wrong, try again", True), ("no, I meant the other server", True),
    ("it didn't work", True), ("still broken", True), ("not what I asked for", True),
    ("thanks, that worked", False), ("now list my cron jobs", False),
    ("no worries", True),  # a leading "no" reads as a correction: the cheaper mistake
])
def test_corrects(text, verdict):
    assert corrects(text, None) is verdict


def test_the_same_request_again_is_a_retry():
    assert corrects("back up my postgres database", "Back up my  Postgres database")
    assert not corrects("ok", "ok")


def test_loaded_skills_and_error_streaks():
    messages = [
        Message(role="user", content='<skill name="pg-backup">…</skill>\n\ngo'),
        call("skill_view", name="db-dump"), call("skill_manage", name="other"),
        Message(role="tool", content="Error: x"), Message(role="tool", content="ok"),
        Message(role="tool", content="Error: y"), Message(role="tool", content="Error: z"),
    ]
    assert loaded_skills(messages) == ["pg-backup", "db-dump"]
    assert error_streak(messages) == 2


def test_an_error_streak_counts_a_failure_at_once(runtime, scripted, skills):
    library, user = skills
    bad = call("read_file", path="/nope/1")
    scripted.then(call("skill_view", name="pg-backup"), bad, call("read_file", path="/nope/2"),
                  call("read_file", path="/nope/3"), "I could not find the dump.")
    send(runtime, "restore my postgres backup", "1")
    usage = library.catalog.usage_of(user, "pg-backup")
    assert (usage.used, usage.failed, usage.succeeded) == (1, 1, 0)
    session = runtime.store.sessions.list(user)[0].id
    assert library.catalog.awaiting(user, session) == []  # judged already


def test_failing_skills_rank_lower_and_are_flagged(runtime, scripted, skills):
    library, user = skills
    query = "back up my postgres database"
    first = [r.entry.name for r in index_for(library, user, query, semantic=False).shown]
    assert first[0] == "pg-backup"
    for n in range(2):
        scripted.then(call("skill_view", name="pg-backup"), "Done.", "Sorry.")
        send(runtime, f"back up my postgres database number {n}", f"a{n}")
        send(runtime, "that's wrong, try again", f"b{n}")
    usage = library.catalog.usage_of(user, "pg-backup")
    assert (usage.failed, usage.succeeded, usage.failing) == (2, 0, True)
    assert "keeps failing, ranked lower" in usage_line(usage)
    after = [r.entry.name for r in index_for(library, user, query, semantic=False).shown]
    assert after.index("pg-backup") > after.index("db-dump")
    assert [e.name for e in failing(library, user)] == ["pg-backup"]

    from core.learning.skill_review import review_request

    class Hook:  # what review_request reads of a HookContext
        store, settings = runtime.store, runtime.settings
        user_id = user

    convo = review_request(Hook(), [Message(role="user", content="x"),
                                    call("skill_view", name="pg-backup")])
    assert "Skill pg-backup keeps preceding failed turns (2 went wrong, 0 well)" in \
        convo[1].content


def _hooks_held(runtime):
    """Turns run with their after-turn hooks held back; returns the contexts they would get."""
    held = []

    async def hold(ctx):
        held.append(ctx)

    runtime.after_turn = [hold]
    return held


def test_a_verdict_is_not_lost_when_the_next_turns_hooks_run_first(runtime, scripted, skills):
    """Two workers: the turn that loaded a skill releases the chat, the next message's turn
    runs and its hooks go first; the first turn's hooks still judge the skill by it."""
    from core.learning.skill_outcomes import skill_outcomes

    library, user = skills
    held = _hooks_held(runtime)
    scripted.then(call("skill_view", name="db-dump"), "Dumped.", "Sorry.")
    send(runtime, "dump my postgres database to a file", "r1")
    send(runtime, "that's wrong, try again", "r2")
    first, second = held
    asyncio.run(skill_outcomes(second))
    assert asyncio.run(skill_outcomes(first)) == {"succeeded": [], "failed": ["db-dump"]}
    usage = library.catalog.usage_of(user, "db-dump")
    assert (usage.failed, usage.succeeded) == (1, 0)
    assert library.catalog.awaiting(user, second.outcome.session_id) == []


def test_hooks_run_after_a_burst_compare_with_the_request_before_their_own(
        runtime, scripted, skills):
    """A message is judged against the request before its turn, found by the turn's inbox
    entry: a later turn stored already does not make a message look like its own retry."""
    from core.learning.skill_outcomes import skill_outcomes

    library, user = skills
    scripted.then(call("skill_view", name="pg-backup"), "Done.", "Listed.", "Fine.")
    send(runtime, "back up my postgres database", "s1")
    held = _hooks_held(runtime)
    send(runtime, "please list my cron jobs now", "s2")
    send(runtime, "and what is on my calendar", "s3")
    for ctx in held:
        asyncio.run(skill_outcomes(ctx))
    usage = library.catalog.usage_of(user, "pg-backup")
    assert (usage.failed, usage.succeeded) == (0, 1)
