"""The event loop never waits for the database (issue 30): while one user's database call hangs
at the Hrana server, ``/healthz`` and another user's whole turn are answered, and the stuck
call is still stuck when they are."""

from __future__ import annotations

import threading

import httpx
import pytest

from iris_testing.llm_server import ScriptedLLM
from iris_testing.waiting import wait_until
from tests.fakes.hrana_fixtures import fresh_hrana_url
from tests.fakes.hrana_server import FaultRule
from tests.fakes.stack import API_KEY, emulator_stack

STUCK = "stuck-9f2c"  # in the stuck user's message: the inbox insert carries it to the server
HANG_SECONDS = 600.0  # far longer than the test: only an answer that did not wait can come


@pytest.mark.e2e  # the emulator over a fresh remote database: ~15 s, most of it its migrations
def test_healthz_and_another_user_answered_while_a_database_call_hangs(hrana, monkeypatch):
    llm = ScriptedLLM()
    llm.reply("answer for bob")
    env = {"IRIS_DB_URL": fresh_hrana_url(hrana), "IRIS_DB_AUTH_TOKEN": hrana.token}
    outcome: list[object] = []
    try:
        with emulator_stack(llm, monkeypatch, **env) as stack:
            hrana.reset()
            hrana.inject(FaultRule("hang", match=STUCK, seconds=HANG_SECONDS, times=1))

            def stuck_user() -> None:
                try:
                    outcome.append(
                        httpx.post(
                            f"{stack.url}/v1/chat/completions",
                            timeout=HANG_SECONDS,
                            headers={"Authorization": f"Bearer {API_KEY}"},
                            json={
                                "model": "iris",
                                "user": "alice",
                                "messages": [{"role": "user", "content": f"hello {STUCK}"}],
                            },
                        )
                    )
                except httpx.HTTPError as exc:
                    outcome.append(exc)

            threading.Thread(target=stuck_user, daemon=True).start()
            wait_until(
                lambda: hrana.stats().get("fault_hang", 0) >= 1,
                "alice's inbox insert to hang at the database",
            )

            health = httpx.get(f"{stack.url}/healthz", timeout=60)
            answer = stack.client.chat.completions.create(
                model="iris", messages=[{"role": "user", "content": "hi"}], user="bob"
            )

            assert health.status_code == 200
            assert answer.choices[0].message.content == "answer for bob"
            assert outcome == []  # alice's call is still stuck: nothing above waited for it
            assert hrana.stats().get("fault_hang", 0) == 1
            hrana.inject()
    finally:
        hrana.inject()


def test_a_turn_its_after_turn_work_a_command_and_a_tick_make_no_database_call_on_the_loop(
    monkeypatch,
):
    """``Database.loop_calls`` counts statements run on a thread that runs an event loop: a
    turn that writes memory through the tool, the after-turn hooks (skill outcomes, account
    links), the HTTP API's answer, context fitting, ``/status`` and the minute tick (cron,
    curation, the sweeper) run every statement in the ``store`` lane instead."""
    import asyncio

    from functions.tick import run_tick

    llm = ScriptedLLM()
    llm.tool_call("memory", {"action": "add", "target": "user", "content": "Alice likes tea."})
    llm.reply("Noted.")
    llm.reply("Hello again.")
    with emulator_stack(llm, monkeypatch) as stack:
        db = stack.runtime.store.db
        answers = [
            stack.client.chat.completions.create(
                model="iris", messages=[{"role": "user", "content": text}], user="alice"
            ).choices[0].message.content
            for text in ("remember that I like tea", "/status", "hello again")
        ]
        asyncio.run(run_tick(stack.runtime))
        asyncio.run(stack.runtime.dispatcher.idle())
        user = stack.runtime.store.users.resolve("http:alice")
        assert answers[0] == "Noted." and "Session ses_" in answers[1]
        assert answers[2] == "Hello again."
        assert [e.content for e in stack.runtime.store.memory.entries(user)] == \
            ["Alice likes tea."]
        assert db.loop_calls == 0


COMMANDS = [
    "/new", "/usage", "/model", "/title Tea talk", "/voice", "/persona", "/forget tea",
    "/link", "/dashboard", "/team", "/team create tea-club", "/remember team: Tea at four.",
    "/skills share nothing", "/memory", "/cron", "/approve", "/compress", "/remember I like tea",
    "/skills pending",
]


def test_every_command_makes_no_database_call_on_the_loop(monkeypatch):
    """Each command's store reads and writes run in the ``store`` lane: a plain handler is run
    there whole (``core.commands.command``), an async one awaits ``blocking``. One stack, the
    count read after each command, every offender named."""
    llm = ScriptedLLM()
    with emulator_stack(llm, monkeypatch) as stack:
        db = stack.runtime.store.db
        on_loop = {}
        for command in COMMANDS:
            before = db.loop_calls
            stack.client.chat.completions.create(
                model="iris", messages=[{"role": "user", "content": command}], user="alice"
            )
            if db.loop_calls != before:
                on_loop[command] = db.loop_calls - before
        assert on_loop == {}
        assert llm.requests == []  # commands only: no model turn ran


def test_tools_that_read_and_write_the_store_make_no_database_call_on_the_loop(monkeypatch):
    """session_info, todo, skill_view, session_search and cronjob (list, create, pause, run)
    in one turn: every statement runs in the ``store`` lane."""
    llm = ScriptedLLM()
    todo = {"todos": [{"id": "1", "content": "tea", "status": "pending"}]}
    (llm.tool_call("session_info", {})
        .tool_call("todo", todo)
        .tool_call("skill_view", {"name": "no-such-skill"})
        .tool_call("session_search", {"query": "tea"})
        .tool_call("cronjob", {"action": "list"})
        .tool_call("cronjob", {"action": "create", "prompt": "brew tea",
                               "schedule": "every 2h"})
        .reply("Done."))
    with emulator_stack(llm, monkeypatch, IRIS_SKILL_REVIEW_MIN_TOOL_CALLS="1000") as stack:
        db = stack.runtime.store.db
        answer = stack.client.chat.completions.create(
            model="iris", messages=[{"role": "user", "content": "tea things"}], user="alice"
        ).choices[0].message.content
        results = [m["content"] for m in llm.requests[-1]["messages"] if m["role"] == "tool"]
        user = stack.runtime.store.users.resolve("http:alice")
        jobs = stack.runtime.store.db.query("SELECT id FROM cron_jobs WHERE user_id = ?", (user,))
        assert answer == "Done." and len(results) == 6, results
        assert "session ses_" in results[0] and "tea" in results[1]
        assert "no skill named 'no-such-skill'" in results[2]
        assert "Created" in results[5] and len(jobs) == 1, results[5]
        assert db.loop_calls == 0
