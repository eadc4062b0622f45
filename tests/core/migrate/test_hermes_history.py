"""A whole Hermes home (iris_testing/hermes_home.py: Hermes' own formats) imported: history,
people, schedules, persona, profiles and skill usage; then run again, interrupted, grown."""

import json
import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from core.clock import ManualClock
from core.migrate.hermes import import_hermes
from core.migrate.hermes_state import HermesStateError, StateDB
from core.scheduler.jobs import CronJobs
from core.store.imports import Imports
from iris_testing.hermes_home import StateWriter, write_home
from tests.clocks import NOW

TABLES = ("users", "accounts", "sessions", "messages", "usage", "cron_jobs", "skills",
          "skill_versions", "skill_usage", "personas", "import_records", "memory_entries",
          "message_vectors")


@pytest.fixture
def clock():
    return ManualClock(NOW)


@pytest.fixture
def home(tmp_path):
    return write_home(tmp_path, NOW)


@pytest.fixture
def ada(store):
    return store.users.for_account("telegram:4242")


def snapshot(store):
    return {t: store.db.query(f"SELECT * FROM {t} ORDER BY 1, 2") for t in TABLES}


def run(store, settings, user, home, **options):
    options.setdefault("embed", "none")
    return import_hermes(store, settings, user, home, **options)


def test_sessions_keep_their_times_titles_tool_calls_lineage_and_cost(store, settings, ada,
                                                                        home):
    run(store, settings, ada, home)
    rows = {r["external_id"]: r for r in store.db.query(
        "SELECT * FROM sessions WHERE user_id = ?", (ada,))}
    first, second = rows["hermes:default:20261120_090000_a1"], rows[
        "hermes:default:20261120_100000_a2"]
    assert (first["chat_key"], first["platform"], first["title"]) == (
        "telegram:4242", "telegram", "Server move")
    assert first["end_reason"] == "hermes:compression" and second["ended_at"] is None
    assert first["started_at"] == (NOW - timedelta(days=3)).timestamp()
    messages = store.messages.for_session(ada, first["id"])
    assert [m.message.role for m in messages] == ["user", "assistant", "tool", "assistant"]
    call = messages[1].message.tool_calls[0]
    assert (call.id, call.name, json.loads(call.arguments)) == (
        "call_1", "terminal", {"command": "lsb_release -a"})
    assert (messages[2].message.tool_call_id, messages[2].message.name) == ("call_1", "terminal")
    assert "scratch that question" not in [m.message.content for m in messages]  # rewound
    summary, *live = store.messages.for_session(ada, second["id"])
    assert summary.compacted and not any(m.compacted for m in live)
    lineage = store.imports.records(ada, "hermes:default", "session")
    assert lineage["20261120_100000_a2"][1]["parent"] == first["id"]
    usage = store.usage.totals(ada, session_id=first["id"])
    assert (usage.prompt_tokens, usage.completion_tokens, usage.cost_usd) == (1200, 300, 0.021)
    cli = rows["hermes:default:20261122_080000_c1"]
    assert (cli["chat_key"], cli["title"]) == ("hermes:cli", "Billing database")
    assert rows["hermes:default:20261122_110000_d1"]["chat_key"] == "hermes:discord:55544433"
    from core.search.engine import search_messages

    (hit, *_) = search_messages(store, ada, "invoicing ledger", limit=3)  # indexed for words
    assert hit.session_id == cli["id"]


def test_people_groups_and_approved_users(store, settings, ada, home):
    report = run(store, settings, ada, home, slack_team="T0TEAM")
    assert store.users.resolve("slack:T0TEAM/U0ADA") == ada
    assert store.access.state("telegram:4242").approved
    assert store.access.state("slack:T0TEAM/U0ADA").approved
    group = store.users.resolve("telegram:group:-1001234")
    assert store.users.get(group).kind == "group" and group != ada
    (group_session,) = store.sessions.list(group)
    assert group_session.chat_key == "telegram:-1001234"
    bob = store.users.resolve("telegram:777")
    assert bob != ada and store.access.state("telegram:777").approved
    (bob_session,) = store.sessions.list(bob)
    assert store.messages.for_session(bob, bob_session.id)[0].message.content.startswith("Bob")
    assert all(s.chat_key != "telegram:777" for s in store.sessions.list(ada, limit=100))
    text = "\n".join(report.lines())
    assert "skipped: discord: Iris has no discord platform" in text


def test_jobs_of_each_kind_become_iris_jobs_and_the_rest_are_refused_with_reasons(
        store, settings, ada, home):
    report = run(store, settings, ada, home)
    jobs = {j.name: j for j in CronJobs(store).list(ada)}
    assert set(jobs) == {"Morning brief", "Check the build", "Dentist reminder",
                         "Weekly report", "Three tips", "Team standup"}
    brief = jobs["Morning brief"]
    assert (brief.schedule.kind, brief.schedule.expr, brief.timezone) == (
        "cron", "0 9 * * *", "Europe/London")
    assert brief.skills == ["plan"] and brief.model == "openrouter/anthropic/claude-sonnet-4"
    assert brief.target.chat_key == "telegram:4242"
    build = jobs["Check the build"]
    assert build.schedule.kind == "interval" and build.target.chat_key == "telegram:4242"
    assert build.next_run_at == (NOW + timedelta(minutes=10)).replace(second=0).timestamp()
    once = jobs["Dentist reminder"]
    assert once.schedule.kind == "once" and once.next_run_at == (NOW + timedelta(days=2)
                                                                  ).timestamp()
    assert jobs["Weekly report"].state == "paused" and jobs["Weekly report"].target.platform \
        == "none"
    assert (jobs["Three tips"].repeat, jobs["Three tips"].runs_done) == (3, 1)
    assert jobs["Team standup"].target.chat_key == "telegram:-1001234"
    refused = "\n".join(report["jobs"].refused)
    assert "Old one-shot" in refused and "already past" in refused
    assert "Disk watchdog" in refused and "host scripts" in refused
    assert "Digest of digests" in refused and "context_from" in refused


def test_persona_skills_usage_and_secrets(store, settings, ada, home):
    from core.skills.library import SkillLibrary

    report = run(store, settings, ada, home)
    assert store.personas.get(ada).content.startswith("You are Hermes, Ada's assistant.")
    names = {s.name for s in SkillLibrary(store, settings).catalog.list(ada)}
    assert {"plan", "systematic-debugging"} <= names
    assert "hermes-agent-skill-authoring" not in names  # matched to Iris' skill-authoring
    usage = store.skills.usage(ada)
    assert (usage["plan"].used, usage["plan"].shown, usage["plan"].patched) == (7, 12, 1)
    assert usage["plan"].last_used_at == (NOW - timedelta(days=1)).timestamp()
    assert usage["skill-authoring"].used == 2
    dump = json.dumps(snapshot(store), default=str) + "\n".join(report.lines())
    for secret in ("sk-or-v1-secret", "tok-secret", "el-secret-value-123", "1:x"):
        assert secret not in dump
    assert "refused: config.yaml: 1 secret-looking value (tts.elevenlabs.api_key)" in \
        "\n".join(report.lines())


def test_a_second_run_changes_nothing_and_a_dry_run_counts_the_same(store, settings, ada,
                                                                      home):
    dry = run(store, settings, ada, home, dry_run=True, all_profiles=True)
    assert snapshot(store)["sessions"] == [] and store.personas.get(ada) is None
    first = run(store, settings, ada, home, all_profiles=True)
    assert dry["sessions"].counts["messages"] == first["sessions"].counts["messages"] == 15
    assert dry["jobs"].counts["jobs"] == first["jobs"].counts["jobs"] == 6
    before = snapshot(store)
    again = run(store, settings, ada, home, all_profiles=True)
    assert snapshot(store) == before
    assert again["sessions"].counts["sessions already imported"] == 7
    assert again["jobs"].counts["jobs already imported"] == 6 and not again["jobs"].taken
    assert again["sessions"].counts["messages"] == 0


def test_an_interrupted_run_completes_when_rerun(store, settings, ada, home, monkeypatch,
                                                 tmp_path):
    calls = {"n": 0}
    real = Imports.add_messages

    def flaky(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Imports, "add_messages", flaky)
    with pytest.raises(KeyboardInterrupt):
        run(store, settings, ada, home)
    partial = store.db.scalar("SELECT count(*) FROM sessions")
    assert 0 < partial < 7
    assert store.db.scalar("SELECT count(*) FROM sessions s WHERE NOT EXISTS (SELECT 1 FROM"
                           " messages m WHERE m.session_id = s.id)") == 0  # no half sessions
    monkeypatch.setattr(Imports, "add_messages", real)
    run(store, settings, ada, home)
    assert store.db.scalar("SELECT count(*) FROM sessions") == 7
    assert store.db.scalar("SELECT count(*) FROM messages") == 15
    assert len(CronJobs(store).list(ada)) == 6


def test_a_grown_state_db_brings_only_the_new_messages(store, settings, ada, home):
    run(store, settings, ada, home)
    conn = sqlite3.connect(home / "state.db")
    conn.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?,"
                 " ?)", ("20261120_100000_a2", "user", "Also get a card.",
                         (NOW - timedelta(minutes=5)).timestamp()))
    conn.commit()
    conn.close()
    again = run(store, settings, ada, home)
    assert again["sessions"].counts["messages"] == 1
    session = store.imports.session_by_external(ada, "hermes:default:20261120_100000_a2")
    texts = [m.message.content for m in store.messages.for_session(ada, session["id"])]
    assert texts[-1] == "Also get a card." and len(texts) == 4


def test_state_db_is_read_while_hermes_writes_and_newer_schemas_are_refused(tmp_path):
    path = tmp_path / "state.db"
    writer = StateWriter(path)
    writer.session("s1", "cli", NOW)
    writer.message("s1", "user", "committed", NOW)
    writer.conn.commit()
    writer.conn.execute("BEGIN IMMEDIATE")  # Hermes mid-write, holding the write lock
    writer.message("s1", "user", "not yet committed", NOW)
    db = StateDB(path)
    assert [m.content for m in db.messages("s1")] == ["committed"]
    db.close()
    writer.conn.rollback()
    writer.conn.execute("UPDATE schema_version SET version = 31")
    writer.close()
    with pytest.raises(HermesStateError, match="schema version 31; this Iris reads versions "
                                               "up to 30"):
        StateDB(path)
    (tmp_path / "junk.db").write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(HermesStateError, match="not a readable SQLite database"):
        StateDB(tmp_path / "junk.db")


def test_an_older_schema_is_read_by_its_columns(store, settings, ada, tmp_path):
    home = tmp_path / "old"
    home.mkdir()
    old = StateWriter(home / "state.db", version=11)
    old.session("o1", "telegram", NOW - timedelta(days=40), user_id="4242",
                ended_at=NOW - timedelta(days=40) + timedelta(minutes=3), title="Old times")
    old.message("o1", "user", "an old question", NOW - timedelta(days=40))
    old.close()
    report = run(store, settings, ada, home)
    assert "state.db: schema version 11, read-only" in report["sessions"].taken
    (session,) = store.sessions.list(ada)
    assert (session.chat_key, session.title) == ("telegram:4242", "Old times")


def test_profiles_go_to_their_own_users_or_one_by_name(store, settings, ada, home):
    report = run(store, settings, ada, home, all_profiles=True)
    work = store.users.resolve("http:hermes-work")
    assert [p.profile for p in report.profiles] == ["play", "work"]
    assert store.personas.get(work).content == "You are the work agent. Stay on work topics."
    (session,) = store.sessions.list(work)
    assert store.messages.for_session(work, session.id)[0].message.content == \
        "Only the work agent knows this."
    solo = store.users.for_account("http:solo")
    single = run(store, settings, solo, home, profile="play")
    assert single.profile == "play" and store.personas.get(solo).content.startswith(
        "You are the play agent")
    with pytest.raises(Exception, match="no such profile"):
        run(store, settings, solo, home, profile="nope")


def test_imported_times_are_not_the_clock(store, ada, settings, home):
    run(store, settings, ada, home)
    latest = store.db.scalar("SELECT max(created_at) FROM messages")
    assert latest == (NOW - timedelta(minutes=10)).timestamp()
    assert datetime.fromtimestamp(latest, UTC) < NOW
