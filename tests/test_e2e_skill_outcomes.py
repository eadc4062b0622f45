"""Skill outcomes end to end over real HTTP (openai client → emulator → litellm → the scripted
model server): a turn that loads a skill counts it loaded; the user's next message decides
whether that turn went well (anything but a correction) or wrong ("that's wrong, try again");
the counts show in `iris skills list --json` and in `/skills`."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from core.skills.importer import import_skills
from core.skills.library import SkillLibrary
from iris_testing.llm_server import ScriptedLLM
from iris_testing.waiting import wait_until
from local_dev.cli import cli
from tests.core.skills.conftest import PG
from tests.fakes.stack import emulator_stack


@pytest.fixture
def stack(monkeypatch):
    llm = ScriptedLLM()
    with emulator_stack(
        llm, monkeypatch, IRIS_SESSION_TITLES="false", IRIS_MEMORY_REVIEW_EVERY="0",
        IRIS_MEMORY_REVIEW_AT_SESSION_END="false", IRIS_SKILL_REVIEW_MIN_TOOL_CALLS="0",
    ) as running:
        yield llm, running.client, running.runtime


def ask(client, text: str) -> str:
    answer = client.chat.completions.create(
        model="iris", messages=[{"role": "user", "content": text}], user="alice")
    return answer.choices[0].message.content


def wait_for(check):
    wait_until(check, "the after-turn hook")


def test_outcome_counts_follow_the_turns_that_load_a_skill(stack, tmp_path):
    llm, client, rt = stack
    (tmp_path / "pg-backup").mkdir()
    (tmp_path / "pg-backup" / "SKILL.md").write_text(PG)
    library = SkillLibrary(rt.store, rt.settings)
    user = rt.store.users.for_account("http:alice")
    assert import_skills(library, user, str(tmp_path)).loaded

    def usage():
        return rt.store.skills.usage_of(user, "pg-backup")

    def session():
        return rt.store.sessions.list(user)[0].id

    llm.tool_call("skill_view", {"name": "pg-backup"}).reply("Backed up to mydb.dump.")
    ask(client, "back up my postgres database please")
    wait_for(lambda: rt.store.skills.awaiting(user, session()) == ["pg-backup"])
    assert (usage().used, usage().succeeded, usage().failed) == (1, 0, 0)
    assert usage().shown >= 1

    llm.reply("You have no cron jobs.")
    ask(client, "ok, and which cron jobs do I have?")  # not a correction: it went well
    wait_for(lambda: usage().succeeded == 1)

    llm.tool_call("skill_view", {"name": "pg-backup"}).reply("Backed up to other.dump.")
    ask(client, "now back up the analytics database the same way")
    wait_for(lambda: rt.store.skills.awaiting(user, session()) == ["pg-backup"])
    llm.reply("Sorry, let me look again.")
    ask(client, "that's wrong, the dump is empty. try again")
    wait_for(lambda: usage().failed == 1)
    assert (usage().used, usage().succeeded, usage().failed) == (2, 1, 1)

    result = CliRunner().invoke(cli, ["skills", "list", "--json", "--user", "http:alice"])
    assert result.exit_code == 0, result.output
    listed = {s["name"]: s["usage"] for s in json.loads(result.output)}
    assert listed["pg-backup"]["succeeded"] == 1 and listed["pg-backup"]["failed"] == 1
    assert listed["pg-backup"]["used"] == 2 and not listed["pg-backup"]["failing"]
    assert "/pg-backup — Backs up a PostgreSQL database" in ask(client, "/skills")
    assert "loaded 2×: 1 went well, 1 wrong)" in ask(client, "/skills")
