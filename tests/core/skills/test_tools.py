"""The LLM-facing skill tools and the /skills and /<skill-name> commands, through real turns."""

from __future__ import annotations

from core.skills.library import SkillLibrary
from tests.core.skills.conftest import PG
from tests.core.skills.turns import call, send


def tool_results(rt, entry):
    stored = rt.store.messages.for_session(entry.user_id, entry.session_id)
    return [m.message.content for m in stored if m.message.role == "tool"]


def test_the_agent_creates_views_and_patches_a_skill(runtime, scripted):
    scripted.then(
        call("skill_manage", action="create", name="pg-backup", content=PG),
        call("skill_manage", action="write_file", name="pg-backup",
                        file_path="references/flags.md", file_content="# Flags\n-Fc: custom\n"),
        call("skill_view", name="pg-backup"),
        call("skill_view", name="pg-backup", file_path="references/flags.md"),
        call("skill_manage", action="patch", name="pg-backup",
                        old_string="pg_dump -Fc", new_string="pg_dump --format=custom"),
        call("skill_manage", action="patch", name="pg-backup"),
        "Saved the procedure.",
        "NOTHING",  # the post-turn review after this busy turn
    )
    entry = send(runtime, "remember how to back up postgres", "1")
    results = tool_results(runtime, entry)
    assert results[0] == "Created skill 'pg-backup': now version 1."
    assert "now version 2" in results[1]
    assert results[2].startswith("Skill pg-backup (version 2, written by Iris)")
    assert "- references/flags.md (20 B)" in results[2] and "pg_dump -Fc mydb" in results[2]
    assert results[3] == "# Flags\n-Fc: custom\n"
    assert "now version 3" in results[4]
    assert results[5] == "Error: action 'patch' needs old_string, new_string"
    library = SkillLibrary(runtime.store, runtime.settings)
    skill = library.find(entry.user_id, "pg-backup")
    assert (skill.version, skill.origin, skill.usage.used, skill.usage.patched) == (3, "agent",
                                                                                   1, 2)
    assert "skill_view" in scripted.tools_seen[0]  # skill_manage is in the catalogue,
    assert "skill_manage" in scripted.tools_seen[-1]  # loaded by calling it


def test_view_and_list_errors_guide_the_model(runtime, scripted):
    scripted.then(
        call("skill_view", name="telegram-bot-set"),
        call("skill_view", name="git-workflow", file_path="references/nope.md"),
        call("skills_list", query="schedule a daily reminder"),
        call("skills_list", category="messaging"),
        call("skills_list"),
        call("skills_list", query="zzqx"),
        "ok",
        "NOTHING",  # the post-turn review after this busy turn
    )
    entry = send(runtime, "skills?", "1")
    results = tool_results(runtime, entry)
    assert "Did you mean telegram-bot-setup?" in results[0]
    assert "has no file 'references/nope.md' (its files: none)" in results[1]
    assert results[2].startswith("- cron-automations [automation]:")
    assert results[3].startswith("1 skill:\nmessaging:\n- telegram-bot-setup: Connects")
    assert results[4].startswith("5 skills:\nautomation:\n- cron-automations:")
    assert results[5] == "No skill matches 'zzqx'."


def test_slash_skills_lists_without_a_model_call(runtime, scripted):
    entry = send(runtime, "/skills", "1")
    assert entry.reply.startswith("5 skills (type /<name> and your request to use one):")
    assert "/cron-automations — " in entry.reply
    found = send(runtime, "/skills deploy to the cloud", "2")
    assert found.reply.splitlines()[1].startswith("/modal-deploy — ")
    assert scripted.requests == []


def test_slash_skill_name_loads_the_skill_into_the_turn(runtime, scripted):
    scripted.then("Following the cron skill.")
    entry = send(runtime, "/cron-automations every monday at 9 send me the news", "1")
    assert entry.reply == "Following the cron skill."
    user_message = scripted.requests[0][-1]
    assert user_message.role == "user"
    assert user_message.content.startswith("The user invoked the skill /cron-automations.")
    assert '<skill name="cron-automations">' in user_message.content
    assert "# Cron automations" in user_message.content
    assert user_message.content.endswith("every monday at 9 send me the news")
    assert "references/cron-expressions.md" in user_message.content
    library = SkillLibrary(runtime.store, runtime.settings)
    assert library.find(entry.user_id, "cron-automations").usage.used == 1
    unknown = send(runtime, "/no-such-skill hello", "2")
    assert unknown.reply.startswith("Unknown command /no-such-skill.")
    assert len(scripted.requests) == 1
