"""A Hermes Agent home built from Hermes' own formats, for import tests and the benchmark.

``state.db`` is created with the DDL of Hermes' ``hermes_state`` schema as published at
**schema version 30** (``SCHEMA_V30``: the ``sessions`` and ``messages`` columns in their order,
``schema_version``, ``state_meta``, ``session_model_usage`` and the inline FTS5 index with its
triggers), written here from reading it; ``SCHEMA_V11`` is the older layout (no chat columns, no
``active``/``compacted``). ``cron/jobs.json`` follows ``cron/jobs.py`` (``{"jobs": [...]}``, each
schedule a dict of kind ``cron``/``interval``/``once``), ``skills/.usage.json`` follows
``tools/skill_usage.py``, approved users ``gateway/pairing.py``
(``pairing/<platform>-approved.json``), and profiles live in ``profiles/<name>/``, each a
home of its own."""

from __future__ import annotations

import json
import shutil
import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

CORPUS = Path("/work/shared/corpora/hermes-skills")
if not CORPUS.is_dir():  # CI clones main with shared/ beside it
    CORPUS = Path(__file__).resolve().parents[4] / "shared" / "corpora" / "hermes-skills"

SCHEMA_V30 = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE system_prompts (hash TEXT PRIMARY KEY, prompt TEXT NOT NULL);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, source TEXT NOT NULL, created_source TEXT, user_id TEXT,
    session_key TEXT, chat_id TEXT, chat_type TEXT, thread_id TEXT, display_name TEXT,
    origin_json TEXT, expiry_finalized INTEGER DEFAULT 0, model TEXT, model_config TEXT,
    system_prompt TEXT, system_prompt_hash TEXT, parent_session_id TEXT,
    started_at REAL NOT NULL, ended_at REAL, end_reason TEXT, message_count INTEGER DEFAULT 0,
    tool_call_count INTEGER DEFAULT 0, input_tokens INTEGER DEFAULT 0,
    output_tokens INTEGER DEFAULT 0, cache_read_tokens INTEGER DEFAULT 0,
    cache_write_tokens INTEGER DEFAULT 0, reasoning_tokens INTEGER DEFAULT 0, cwd TEXT,
    git_branch TEXT, git_repo_root TEXT, git_metadata_generation INTEGER NOT NULL DEFAULT 0,
    billing_provider TEXT, billing_base_url TEXT, billing_mode TEXT, estimated_cost_usd REAL,
    actual_cost_usd REAL, cost_status TEXT, cost_source TEXT, pricing_version TEXT, title TEXT,
    title_source TEXT, last_activity_at REAL, last_activity_description TEXT,
    last_activity_provenance TEXT, api_call_count INTEGER DEFAULT 0, handoff_state TEXT,
    handoff_platform TEXT, handoff_error TEXT, compression_failure_cooldown_until REAL,
    compression_failure_error TEXT, compression_fallback_streak INTEGER NOT NULL DEFAULT 0,
    compression_ineffective_count INTEGER NOT NULL DEFAULT 0, compression_recovery_deadline REAL,
    compression_overload_streak INTEGER NOT NULL DEFAULT 0, profile_name TEXT,
    transport_profile TEXT, rewind_count INTEGER NOT NULL DEFAULT 0,
    archived INTEGER NOT NULL DEFAULT 0, pinned INTEGER NOT NULL DEFAULT 0,
    hidden INTEGER NOT NULL DEFAULT 0, last_read_at REAL, tool_names TEXT,
    FOREIGN KEY (parent_session_id) REFERENCES sessions(id),
    FOREIGN KEY (system_prompt_hash) REFERENCES system_prompts(hash)
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
    effect_disposition TEXT, timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT,
    reasoning TEXT, reasoning_content TEXT, reasoning_details TEXT, codex_reasoning_items TEXT,
    codex_message_items TEXT, platform_message_id TEXT, observed INTEGER DEFAULT 0,
    _compressed_summary INTEGER NOT NULL DEFAULT 0, active INTEGER NOT NULL DEFAULT 1,
    compacted INTEGER NOT NULL DEFAULT 0, api_content TEXT, display_kind TEXT,
    display_metadata TEXT, display_identity BLOB, display_order INTEGER
);
CREATE TABLE session_model_usage (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE, model TEXT NOT NULL,
    billing_provider TEXT NOT NULL DEFAULT '', billing_base_url TEXT NOT NULL DEFAULT '',
    billing_mode TEXT NOT NULL DEFAULT '', task TEXT NOT NULL DEFAULT '',
    api_call_count INTEGER NOT NULL DEFAULT 0, input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0, cache_read_tokens INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0, reasoning_tokens INTEGER NOT NULL DEFAULT 0,
    estimated_cost_usd REAL NOT NULL DEFAULT 0, actual_cost_usd REAL NOT NULL DEFAULT 0,
    cost_status TEXT, cost_source TEXT, first_seen REAL, last_seen REAL,
    PRIMARY KEY (session_id, model, billing_provider, billing_base_url, billing_mode, task)
);
CREATE TABLE state_meta (key TEXT PRIMARY KEY, value TEXT);
CREATE INDEX idx_sessions_source ON sessions(source);
CREATE INDEX idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX idx_sessions_started ON sessions(started_at DESC);
CREATE INDEX idx_messages_session ON messages(session_id, timestamp);
CREATE INDEX idx_messages_session_active ON messages(session_id, active, timestamp);
CREATE VIRTUAL TABLE messages_fts USING fts5(content);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, COALESCE(new.content, '') || ' '
        || COALESCE(new.tool_name, '') || ' ' || COALESCE(new.tool_calls, ''));
END;
"""

SCHEMA_V11 = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT, model_config TEXT,
    system_prompt TEXT, parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL,
    end_reason TEXT, message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0,
    cache_read_tokens INTEGER DEFAULT 0, cache_write_tokens INTEGER DEFAULT 0,
    reasoning_tokens INTEGER DEFAULT 0, billing_provider TEXT, billing_base_url TEXT,
    billing_mode TEXT, estimated_cost_usd REAL, actual_cost_usd REAL, cost_status TEXT,
    cost_source TEXT, pricing_version TEXT, title TEXT, api_call_count INTEGER DEFAULT 0,
    handoff_state TEXT, handoff_platform TEXT, handoff_error TEXT,
    FOREIGN KEY (parent_session_id) REFERENCES sessions(id)
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
    timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT, reasoning TEXT,
    reasoning_content TEXT, reasoning_details TEXT, codex_reasoning_items TEXT,
    codex_message_items TEXT
);
CREATE TABLE state_meta (key TEXT PRIMARY KEY, value TEXT);
"""

SOUL = ("You are Hermes, Ada's assistant. Be warm but brief; call her Ada; answer in "
        "British English; when unsure, say so plainly.")


def iso(at: datetime) -> str:
    return at.astimezone(UTC).isoformat()


@dataclass
class StateWriter:
    """Writes sessions and messages the way Hermes' SessionDB does (schema_version row first)."""

    path: Path
    version: int = 30
    conn: sqlite3.Connection = field(init=False)
    columns: set[str] = field(init=False)

    def __post_init__(self) -> None:
        self.conn = sqlite3.connect(self.path)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.executescript(SCHEMA_V30 if self.version >= 30 else SCHEMA_V11)
        self.conn.execute("INSERT INTO schema_version (version) VALUES (?)", (self.version,))
        self.columns = {r[1] for r in self.conn.execute("PRAGMA table_info(sessions)")}

    def session(self, sid: str, source: str, started: datetime, **fields: Any) -> None:
        row = {"id": sid, "source": source, "started_at": started.timestamp(), **fields}
        row = {k: (v.timestamp() if isinstance(v, datetime) else v) for k, v in row.items()
               if k in self.columns}
        self.conn.execute(f"INSERT INTO sessions ({', '.join(row)}) VALUES "
                          f"({', '.join('?' for _ in row)})", tuple(row.values()))

    def message(self, sid: str, role: str, content: str | None, at: datetime, **fields: Any
                ) -> int:
        msg_cols = {r[1] for r in self.conn.execute("PRAGMA table_info(messages)")}
        row = {"session_id": sid, "role": role, "content": content,
               "timestamp": at.timestamp(), **fields}
        row = {k: v for k, v in row.items() if k in msg_cols}
        cur = self.conn.execute(f"INSERT INTO messages ({', '.join(row)}) VALUES "
                                f"({', '.join('?' for _ in row)})", tuple(row.values()))
        return int(cur.lastrowid or 0)

    def close(self) -> None:
        self.conn.commit()
        self.conn.close()


def tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> str:
    return json.dumps([{"id": call_id, "type": "function",
                        "function": {"name": name, "arguments": json.dumps(arguments)}}])


def write_state(path: Path, now: datetime) -> None:
    """Several platforms, a compression chain, a group, another person, rewound messages."""
    db = StateWriter(path)
    t0 = now - timedelta(days=3)
    # Ada's Telegram DM: compressed once; the continuation is still open 10 minutes ago.
    db.session("20261120_090000_a1", "telegram", t0, user_id="4242", chat_id="4242",
               chat_type="dm", display_name="Ada", model="anthropic/claude-sonnet-4",
               ended_at=t0 + timedelta(hours=1), end_reason="compression", title="Server move",
               input_tokens=1200, output_tokens=300, actual_cost_usd=0.021, api_call_count=3)
    db.message("20261120_090000_a1", "user", "Which Ubuntu runs on the new server?", t0)
    db.message("20261120_090000_a1", "assistant", None, t0 + timedelta(seconds=5),
               tool_calls=tool_call("call_1", "terminal", {"command": "lsb_release -a"}))
    db.message("20261120_090000_a1", "tool", "Description: Ubuntu 24.04.1 LTS",
               t0 + timedelta(seconds=6), tool_call_id="call_1", tool_name="terminal")
    db.message("20261120_090000_a1", "assistant", "It runs Ubuntu 24.04.1 LTS.",
               t0 + timedelta(seconds=9))
    db.message("20261120_090000_a1", "user", "scratch that question", t0 + timedelta(seconds=30),
               active=0)  # rewound in Hermes
    child_start = t0 + timedelta(hours=1)
    db.session("20261120_100000_a2", "telegram", child_start, user_id="4242", chat_id="4242",
               chat_type="dm", display_name="Ada", model="anthropic/claude-sonnet-4",
               parent_session_id="20261120_090000_a1", input_tokens=800, output_tokens=200,
               actual_cost_usd=0.012, api_call_count=2)
    db.message("20261120_100000_a2", "user", "[CONTEXT SUMMARY]: Ada asked about the server; it "
               "runs Ubuntu 24.04.1.", child_start, compacted=1, active=0)
    db.message("20261120_100000_a2", "user", "My cat Miso turns four on Saturday; remind me to "
               "buy salmon treats.", now - timedelta(minutes=12))
    db.message("20261120_100000_a2", "assistant", "Happy early birthday to Miso! I'll remember "
               "the salmon treats.", now - timedelta(minutes=10))
    # A Telegram supergroup Ada is in.
    db.session("20261121_120000_g1", "telegram", t0 + timedelta(days=1), user_id="4242",
               chat_id="-1001234", chat_type="supergroup", display_name="Ada",
               ended_at=t0 + timedelta(days=1, hours=1), end_reason="idle")
    db.message("20261121_120000_g1", "user", "Team lunch is at noon on Friday.",
               t0 + timedelta(days=1))
    db.message("20261121_120000_g1", "assistant", "Noted: Friday, 12:00.",
               t0 + timedelta(days=1, seconds=4))
    # Slack DM, the CLI, Discord.
    db.session("20261121_150000_s1", "slack", t0 + timedelta(days=1, hours=3), user_id="U0ADA",
               chat_id="D0ADA", chat_type="dm", ended_at=t0 + timedelta(days=1, hours=4),
               end_reason="idle")
    db.message("20261121_150000_s1", "user", "Draft the release notes for 2.3.",
               t0 + timedelta(days=1, hours=3))
    db.message("20261121_150000_s1", "assistant", "Here is a draft for 2.3: faster sync.",
               t0 + timedelta(days=1, hours=3, seconds=8))
    db.session("20261122_080000_c1", "cli", t0 + timedelta(days=2), title="Billing database",
               ended_at=t0 + timedelta(days=2, hours=1), end_reason="cli_exit",
               input_tokens=500, output_tokens=100, estimated_cost_usd=0.004, api_call_count=1)
    db.message("20261122_080000_c1", "user", "We settled on PostgreSQL for the invoicing "
               "ledger because it gives us transactions and row locks.", t0 + timedelta(days=2))
    db.message("20261122_080000_c1", "assistant", "Understood: PostgreSQL for invoicing.",
               t0 + timedelta(days=2, seconds=3))
    db.message("20261122_080000_c1", "session_meta", "{\"cwd\": \"/home/ada\"}",
               t0 + timedelta(days=2, seconds=4))
    db.session("20261122_110000_d1", "discord", t0 + timedelta(days=2, hours=3),
               user_id="99887766", chat_id="55544433", chat_type="dm",
               ended_at=t0 + timedelta(days=2, hours=4))
    db.message("20261122_110000_d1", "user", "ping from discord", t0 + timedelta(days=2, hours=3))
    # Bob, whom Ada approved on the gateway, in his own DM.
    db.session("20261122_130000_b1", "telegram", t0 + timedelta(days=2, hours=5), user_id="777",
               chat_id="777", chat_type="dm", display_name="Bob",
               ended_at=t0 + timedelta(days=2, hours=6), end_reason="idle")
    db.message("20261122_130000_b1", "user", "Bob here: what's the wifi password policy?",
               t0 + timedelta(days=2, hours=5))
    db.close()


def jobs(now: datetime) -> dict[str, Any]:
    def job(jid: str, name: str, schedule: dict[str, Any], **extra: Any) -> dict[str, Any]:
        base: dict[str, Any] = {
            "id": jid, "name": name, "prompt": f"{name}: do it", "skills": [], "skill": None,
            "model": None, "provider": None, "base_url": None, "script": None,
            "no_agent": False, "context_from": None, "schedule": schedule,
            "schedule_display": schedule.get("display"), "repeat": {"times": None,
                                                                    "completed": 0},
            "enabled": True, "state": "scheduled", "paused_at": None, "paused_reason": None,
            "created_at": iso(now - timedelta(days=5)), "next_run_at": None,
            "last_run_at": None, "last_status": None, "last_error": None,
            "last_delivery_error": None, "deliver": "origin",
            "origin": {"platform": "telegram", "chat_id": "4242", "chat_name": "Ada"},
            "user_id": "4242", "user_platform": "telegram", "enabled_toolsets": None,
            "workdir": None,
        }
        base.update(extra)
        return base

    return {"jobs": [
        job("a1b2c3d4e5f6", "Morning brief", {"kind": "cron", "expr": "0 9 * * *",
                                              "display": "0 9 * * *"},
            skills=["plan"], model="anthropic/claude-sonnet-4", provider="openrouter"),
        job("b1b2c3d4e5f6", "Check the build", {"kind": "interval", "minutes": 30,
                                                "display": "every 30m"}, deliver="telegram",
            last_run_at=iso(now - timedelta(minutes=20))),
        job("c1b2c3d4e5f6", "Dentist reminder", {
            "kind": "once", "run_at": iso(now + timedelta(days=2)),
            "display": "once"}, repeat={"times": 1, "completed": 0}),
        job("d1b2c3d4e5f6", "Old one-shot", {"kind": "once",
                                             "run_at": iso(now - timedelta(days=1))},
            repeat={"times": 1, "completed": 0}),
        job("e1b2c3d4e5f6", "Disk watchdog", {"kind": "interval", "minutes": 15},
            script="check_disk.sh", no_agent=True),
        job("f1b2c3d4e5f6", "Weekly report", {"kind": "cron", "expr": "0 17 * * 5"},
            enabled=False, state="paused", deliver="local"),
        job("a2b2c3d4e5f6", "Three tips", {"kind": "cron", "expr": "30 8 * * 1-5"},
            repeat={"times": 3, "completed": 1}),
        job("a3b2c3d4e5f6", "Digest of digests", {"kind": "cron", "expr": "0 20 * * *"},
            context_from=["a1b2c3d4e5f6"]),
        job("a4b2c3d4e5f6", "Team standup", {"kind": "cron", "expr": "45 9 * * 1-5"},
            origin={"platform": "telegram", "chat_id": "-1001234", "chat_name": "Team"}),
    ]}


SKILLS = ("plan", "systematic-debugging", "hermes-agent-skill-authoring")


def write_home(root: Path, now: datetime, *, profiles: tuple[str, ...] = ("work", "play")
               ) -> Path:
    home = root / ".hermes"
    (home / "memories").mkdir(parents=True)
    (home / "memories" / "MEMORY.md").write_text(
        "Server runs Ubuntu 24.04.\n§\nDeploy with `make deploy`.\n", encoding="utf-8")
    (home / "memories" / "USER.md").write_text("Name: Ada.\n§\nPrefers terse replies.\n",
                                               encoding="utf-8")
    (home / "SOUL.md").write_text(SOUL, encoding="utf-8")
    (home / "config.yaml").write_text(
        "model:\n  default: anthropic/claude-sonnet-4\n  provider: openrouter\n"
        "timezone: Europe/London\n"
        "tts:\n  elevenlabs:\n    api_key: el-secret-value-123\n", encoding="utf-8")
    (home / ".env").write_text("OPENROUTER_API_KEY=sk-or-v1-secret\nTELEGRAM_BOT_TOKEN=1:x\n",
                               encoding="utf-8")
    (home / "auth.json").write_text('{"providers": {"nous": {"access_token": "tok-secret"}}}',
                                    encoding="utf-8")
    skills = home / "skills"
    for name in SKILLS:
        shutil.copytree(CORPUS / name, skills / "productivity" / name)
    (skills / ".bundled_manifest").write_text(
        "".join(f"{n}:0123abcd\n" for n in SKILLS), encoding="utf-8")
    (skills / ".usage.json").write_text(json.dumps({
        "plan": {"use_count": 7, "view_count": 12, "last_used_at": iso(now - timedelta(days=1)),
                 "last_viewed_at": iso(now - timedelta(hours=5)), "patch_count": 1,
                 "last_patched_at": iso(now - timedelta(days=9)), "state": "active",
                 "pinned": False},
        "hermes-agent-skill-authoring": {"use_count": 2, "view_count": 3,
                                         "last_used_at": iso(now - timedelta(days=2))},
        "long-gone-skill": {"use_count": 4},
    }, indent=2), encoding="utf-8")
    (home / "cron").mkdir()
    (home / "cron" / "jobs.json").write_text(json.dumps(jobs(now), indent=2), encoding="utf-8")
    (home / "pairing").mkdir()
    (home / "pairing" / "telegram-approved.json").write_text(json.dumps({
        "4242": {"user_name": "Ada", "approved_at": (now - timedelta(days=30)).timestamp()},
        "777": {"user_name": "Bob", "approved_at": (now - timedelta(days=9)).timestamp()},
    }), encoding="utf-8")
    write_state(home / "state.db", now)
    for name in profiles:
        sub = home / "profiles" / name
        (sub / "memories").mkdir(parents=True)
        (sub / "memories" / "MEMORY.md").write_text(f"The {name} profile keeps its own notes.\n",
                                                    encoding="utf-8")
        (sub / "SOUL.md").write_text(f"You are the {name} agent. Stay on {name} topics.",
                                     encoding="utf-8")
        db = StateWriter(sub / "state.db")
        db.session(f"{name}_s1", "cli", now - timedelta(days=1), ended_at=now - timedelta(hours=20))
        db.message(f"{name}_s1", "user", f"Only the {name} agent knows this.",
                   now - timedelta(days=1))
        db.close()
    return home
