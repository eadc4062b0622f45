"""The Team page in a real headless Chromium: an admin approves a member's held note with a
click and it reaches another member's next prompt; a member who leaves with the page's button
loses the team's notes from their very next prompt; a member shares a skill from its page and
an admin approves it from the Team page's diff, after which another member is offered it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import expect
else:
    try:
        from playwright.sync_api import expect
    except ImportError:  # the `browser` fixture skips, or fails under IRIS_REQUIRE_BROWSER=1
        expect = None

from core.teams import manage
from core.teams.notes import write_note
from tests.dashboard.test_browser import sign_in, system_prompt

NOTE = "The on-call phone is in the second drawer."


def test_an_admin_approves_with_a_click_and_a_member_leaves_with_one(dash, new_page, shots):
    store = dash.runtime.store
    dash.ask("/help", "carol")  # carol and bob talk to Iris first, as docs/teams.md says
    dash.ask("/help", "bob")
    ada, _bob, carol = (store.users.for_account(f"http:{n}") for n in ("ada", "bob", "carol"))
    manage.create(store, ada, "ops")
    manage.add(store, ada, "ops", "http:bob", "admin")
    manage.add(store, ada, "ops", "http:carol")
    team = store.teams.find(ada, "ops")
    held = write_note(store, carol, team.id, NOTE)
    assert held.held_because is not None

    admin = new_page()
    sign_in(admin, dash.link_for("bob"))
    admin.get_by_role("link", name="Team").click()
    waiting = admin.locator(f'[data-held="{held.note.id}"]')
    expect(waiting).to_contain_text(NOTE)
    expect(waiting).to_contain_text("by http:carol")
    shots.take(admin, "team-held")
    waiting.get_by_role("button", name=f"Approve {held.note.id}").click()
    expect(admin.locator(".notice, [role=status]").first).to_contain_text("is now one of ops")
    expect(admin.locator(f'.notes [data-note="{held.note.id}"]')).to_contain_text(NOTE)
    expect(admin.locator(f'[data-held="{held.note.id}"]')).to_have_count(0)

    dash.llm.reply("Second drawer.")
    assert dash.ask("Where is the on-call phone?", "carol") == "Second drawer."
    assert NOTE in system_prompt(dash.llm)

    member = new_page()
    sign_in(member, dash.link_for("carol"))
    member.get_by_role("link", name="Team").click()
    expect(member.locator('[data-team="ops"]')).to_contain_text(NOTE)
    expect(member.get_by_role("button", name=f"Approve {held.note.id}")).to_have_count(0)
    member.get_by_role("button", name="Leave ops").click()  # the confirmation is accepted
    expect(member.get_by_text("You are in no team")).to_be_visible()
    assert store.teams.role_of(team.id, carol) is None

    dash.llm.reply("No idea.")  # the same session: leaving takes effect at once
    assert dash.ask("Where is the on-call phone?", "carol") == "No idea."
    assert NOTE not in system_prompt(dash.llm)


PG = ("---\nname: pg-backup\ndescription: Backs up a PostgreSQL database with pg_dump. Use when "
      "asked to back up Postgres.\n---\n\n# Postgres backup\n\n1. Run pg_dump -Fc (STEP-ONE).\n")


def test_a_member_shares_a_skill_with_a_click_and_an_admin_approves_it_from_its_diff(
    dash, new_page, shots
):
    from core.skills.library import SkillLibrary
    from core.skills.manage import SkillEditor

    store = dash.runtime.store
    for name in ("carol", "bob", "ada"):
        dash.ask("/help", name)
    ada, _bob, carol = (store.users.for_account(f"http:{n}") for n in ("ada", "bob", "carol"))
    manage.create(store, ada, "ops")
    manage.add(store, ada, "ops", "http:bob", "admin")
    manage.add(store, ada, "ops", "http:carol")
    SkillEditor(SkillLibrary(store, dash.runtime.settings), carol).create("pg-backup", PG)

    member = new_page()
    sign_in(member, dash.link_for("carol"))
    member.get_by_role("link", name="Skills").click()
    member.get_by_role("link", name="pg-backup").first.click()
    member.get_by_role("button", name="Share pg-backup").click()
    expect(member.locator(".notice, [role=status]").first).to_contain_text(
        "pg-backup v1 proposed to ops")

    dash.llm.reply("Noted.")  # not offered before an admin approves
    dash.ask("Please back up the Postgres database.", "ada")
    assert "pg-backup" not in system_prompt(dash.llm)

    admin = new_page()
    sign_in(admin, dash.link_for("bob"))
    admin.get_by_role("link", name="Team").click()
    waiting = admin.locator('[data-waiting-skill="pg-backup"]')
    expect(waiting).to_contain_text("by http:carol")
    expect(waiting.locator(".diff .add").filter(has_text="STEP-ONE")).to_be_visible()
    shots.take(admin, "team-skill-waiting")
    waiting.get_by_role("button", name="Approve pg-backup v1").click()
    expect(admin.locator(".notice, [role=status]").first).to_contain_text(
        "now offered to every member of ops")
    offered = admin.locator('[data-team-skill="pg-backup"]')
    expect(offered).to_contain_text("proposed by http:carol")

    dash.ask("/new", "ada")  # a session's system prompt is fixed; the next one has it
    dash.llm.reply("Backing up.")
    dash.ask("Please back up the Postgres database.", "ada")
    assert "- pg-backup:" in system_prompt(dash.llm)  # offered to another member
