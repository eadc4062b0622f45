"""The dashboard in a real headless Chromium against the emulator on loopback (scripted model
through litellm): sign in with a link from /dashboard, see a fact told in chat on the memory
page, edit it and see the next session's prompt change, a streamed answer, creating a cron job
from a schedule preview and pausing it, rolling back a skill; another user's pages are 404, the
owner's 403; a used or expired link is refused."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import expect
else:
    try:
        from playwright.sync_api import expect
    except ImportError:  # the `browser` fixture skips, or fails under IRIS_REQUIRE_BROWSER=1
        expect = None

from core.dashboard.signin import issue_link
from core.scheduler.jobs import CronJobs
from core.skills.library import SkillLibrary
from core.skills.manage import SkillEditor


def sign_in(page, link: str) -> None:
    page.goto(link)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Chat", exact=True)).to_be_visible()


def script_ready(page) -> None:
    """ui.js runs after the page is parsed (defer): wait for it before using what it adds."""
    expect(page.locator("html[data-ready]")).to_have_count(1)


def system_prompt(llm) -> str:
    first = llm.requests[-1]["messages"][0]
    assert first["role"] == "system"
    return first["content"]


def skill_md(description: str, body: str) -> str:
    return f"---\nname: tea-timer\ndescription: {description}\n---\n\n# Tea timer\n\n{body}\n"


def test_a_fact_told_in_chat_is_on_the_memory_page_and_an_edit_reaches_the_next_prompt(
    dash, new_page, shots
):
    page = new_page()
    sign_in(page, dash.link_for("alice"))
    alice = dash.user_id("alice")
    assert page.url.endswith(f"/ui/u/{alice}/chat")

    dash.llm.tool_call("memory", {"action": "add", "target": "user",
                                  "content": "Alice is allergic to peanuts."})
    dash.llm.reply("Noted: no peanuts for you.")
    script_ready(page)
    page.get_by_label("Message (Ctrl+Enter sends)").fill("I'm allergic to peanuts, remember it")
    page.get_by_role("button", name="Send").click()
    answer = page.locator(".bubble.assistant").last
    expect(answer).to_have_text("Noted: no peanuts for you.")
    expect(answer).to_have_attribute("data-state", "done")
    shots.take(page, "chat")

    page.get_by_role("link", name="Memory").click()
    entry = page.locator("li[data-entry]", has_text="Alice is allergic to peanuts.")
    expect(entry).to_have_count(1)
    expect(page.get_by_role("meter", name="USER PROFILE fill level")).to_have_attribute(
        "aria-valuenow", re.compile(r"[1-9]"))
    shots.take(page, "memory")

    entry.get_by_text("Edit or remove").click()
    entry.get_by_label("Entry text").fill("Alice is allergic to peanuts and shellfish.")
    entry.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status")).to_contain_text("Saved.")
    expect(page.locator("li[data-entry]", has_text="peanuts and shellfish")).to_have_count(1)
    store = dash.runtime.store
    assert [e.content for e in store.memory.entries(alice, "user")] == [
        "Alice is allergic to peanuts and shellfish."]

    page.get_by_role("link", name="Chat").click()
    page.get_by_role("button", name="New session").click()
    expect(page.get_by_role("status")).to_contain_text("Started a new session.")
    dash.llm.reply("A shellfish-free, peanut-free stir-fry.")
    script_ready(page)
    page.get_by_label("Message (Ctrl+Enter sends)").fill("what should I cook?")
    page.keyboard.press("Control+Enter")
    expect(page.locator(".bubble.assistant").last).to_have_text(
        "A shellfish-free, peanut-free stir-fry.")
    prompt = system_prompt(dash.llm)
    assert "[user] Alice is allergic to peanuts and shellfish." in prompt

    page.get_by_role("link", name="Sessions").click()
    page.get_by_role("searchbox", name="Search your conversations").fill("peanuts")
    page.get_by_role("button", name="Search").click()
    expect(page.locator("mark").first).to_be_visible()
    shots.take(page, "sessions")
    page.get_by_role("link", name="Usage").click()
    expect(page.get_by_role("img", name=re.compile("Tokens per day"))).to_be_visible()
    shots.take(page, "usage")


def test_create_and_pause_a_cron_job_and_roll_back_a_skill(dash, new_page, shots):
    page = new_page()
    sign_in(page, dash.link_for("alice"))
    alice = dash.user_id("alice")
    rt = dash.runtime
    library = SkillLibrary(rt.store, rt.settings)
    editor = SkillEditor(library, alice, provenance="user")
    editor.create("tea-timer", skill_md("Time a pot of tea by its kind", "Steep green tea 2 min."))
    editor.edit("tea-timer", skill_md("Time a pot of tea by its kind", "Steep green tea 9 min."))

    page.get_by_role("link", name="Cron").click()
    page.get_by_label("What Iris should do").fill("Summarise the news")
    page.get_by_label(re.compile("^When")).fill("0 7 * * *")
    page.get_by_role("button", name="Preview the schedule").click()
    expect(page.locator("#preview")).to_contain_text(
        "Next runs: 2031-03-05 07:00 UTC, 2031-03-06 07:00 UTC")
    page.get_by_role("button", name="Create this job").click()
    expect(page.get_by_role("status")).to_contain_text("Created “Summarise the news”")
    [job] = CronJobs(rt.store).list(alice)
    card = page.locator(f"[data-job='{job.id}']")
    expect(card.locator("[data-next]")).to_have_text("2031-03-05 07:00 UTC")
    shots.take(page, "cron")
    card.get_by_role("button", name="Pause").click()
    expect(page.get_by_role("status")).to_contain_text("Paused “Summarise the news”.")
    expect(card.locator("[data-state]")).to_have_text("paused")
    assert CronJobs(rt.store).get(alice, job.id).state == "paused"
    card.get_by_role("button", name="Resume").click()
    expect(card.locator("[data-state]")).to_have_text("active")

    page.get_by_role("link", name="Skills").click()
    page.get_by_role("link", name="tea-timer").click()
    expect(page.locator("pre[data-file]")).to_contain_text("9 min")
    page.get_by_text("Changes from v1").click()
    expect(page.locator(".diff .del")).to_contain_text("2 min")
    expect(page.locator(".diff .add")).to_contain_text("9 min")
    shots.take(page, "skill")
    page.get_by_role("button", name="Roll back to v1").click()
    expect(page.get_by_role("status")).to_contain_text("tea-timer is now version 3")
    expect(page.locator("pre[data-file]")).to_contain_text("2 min")
    assert "2 min" in library.snapshot(alice, "tea-timer").text()


def test_a_user_cannot_open_another_users_pages_nor_the_owners(dash, new_page, shots):
    alice_page = new_page()
    sign_in(alice_page, dash.link_for("alice"))
    alice = dash.user_id("alice")
    dash.ask("/help", "carol")
    bob_page = new_page()
    sign_in(bob_page, dash.link_for("bob"))
    for where in ("memory", "chat", "sessions", "cron", "skills", "usage"):
        response = bob_page.goto(f"{dash.url}/ui/u/{alice}/{where}")
        assert response.status == 404, where
    for where in ("users", "held", "deliveries", "settings"):
        response = bob_page.goto(f"{dash.url}/ui/owner/{where}")
        assert response.status == 403, where
    expect(bob_page.get_by_role("link", name="Users")).to_have_count(0)

    link = issue_link(dash.runtime.store, dash.user_id("carol"), is_owner=True,
                      issued_by="cli:operator", base_url=dash.url)  # as `iris dashboard link`
    owner = new_page()
    sign_in(owner, link.url)
    owner.get_by_role("link", name="Users").click()
    expect(owner.get_by_role("cell", name=re.compile("http:bob"))).to_be_visible()
    shots.take(owner, "owner-users")
    owner.get_by_role("link", name="Settings").click()
    expect(owner.get_by_role("row", name=re.compile(r"^api_key "))).to_contain_text("(set)")
    assert "iris-test-key" not in owner.content()
    shots.take(owner, "owner-settings")


def test_a_used_or_expired_link_is_refused_and_logout_ends_the_session(dash, new_page):
    link = dash.link_for("alice")
    first = new_page()
    sign_in(first, link)

    second = new_page()
    second.goto(link)
    second.get_by_role("button", name="Sign in").click()
    expect(second.get_by_role("alert")).to_contain_text("was used already")
    response = second.goto(f"{dash.url}/ui/u/{dash.user_id('alice')}/memory")
    assert response.status == 401

    late = dash.link_for("alice")
    dash.clock.advance(timedelta(minutes=10, seconds=1))
    third = new_page()
    third.goto(late)
    third.get_by_role("button", name="Sign in").click()
    expect(third.get_by_role("alert")).to_contain_text("has expired")

    assert "1 session ended" in dash.ask("/dashboard logout", "alice")
    response = first.goto(f"{dash.url}/ui/u/{dash.user_id('alice')}/memory")
    assert response.status == 401
    expect(first.get_by_role("heading", name="You are not signed in")).to_be_visible()
