"""``iris cron …`` through click, against a real database file, litellm → the scripted model
server, and python-telegram-bot → the fake Bot API."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner

from iris_testing.llm_server import ScriptedLLM
from iris_testing.server import serve
from iris_testing.telegram_api import FakeTelegram
from local_dev.cli import cli


@pytest.fixture
def llm():
    return ScriptedLLM()


@pytest.fixture
def telegram():
    return FakeTelegram()


@pytest.fixture
def env(monkeypatch, llm, telegram):
    with serve(llm.app) as model, serve(telegram.app) as bot:
        for name, value in {
            "IRIS_MODEL": "openai/scripted-model", "IRIS_MODEL_API_BASE": f"{model.url}/v1",
            "IRIS_MODEL_API_KEY": "x", "IRIS_MODEL_RETRIES": "0",
            "IRIS_TELEGRAM_TOKEN": "7000001:test-token", "IRIS_TELEGRAM_API_BASE": bot.url,
        }.items():
            monkeypatch.setenv(name, value)
        yield


def iris(*args: str, ok: bool = True):
    result = CliRunner().invoke(cli, list(args))
    if ok:
        assert result.exit_code == 0, result.output
    return result


def add(*extra: str) -> str:
    result = iris("cron", "add", "--user", "telegram:4242", "--schedule", "every 5m",
                  "--prompt", "Say hi", "--deliver", "telegram:4242", *extra)
    job_id = result.stdout.strip()
    assert job_id.startswith("job_") and "\n" not in job_id
    return job_id


def later(minutes: int) -> str:
    return (datetime.now(UTC) + timedelta(minutes=minutes)).isoformat()


def test_add_list_show_pause_resume_remove(iris_home):
    job_id = add("--name", "greeter")
    second = json.loads(iris("cron", "add", "--user", "telegram:4242", "--schedule",
                             "daily at 7:30", "--prompt", "x", "--name", "b", "--json").stdout)
    assert second["schedule"] == "at 07:30 every day (UTC)" and second["state"] == "active"
    listed = iris("cron", "list", "--user", "telegram:4242").stdout
    assert f"{job_id} “greeter”: every 5 minutes" in listed and "→ telegram:4242" in listed
    as_json = json.loads(iris("cron", "list", "--user", "telegram:4242", "--json").stdout)
    assert [j["name"] for j in as_json] == ["greeter", "b"]
    assert as_json[0]["target"]["address"]["chat_id"] == "4242"
    assert "delivers to: telegram:4242" in iris("cron", "show", job_id).stdout
    assert iris("cron", "pause", job_id).stdout.startswith(f"paused: {job_id}")
    assert json.loads(iris("cron", "show", job_id, "--json").stdout)["state"] == "paused"
    assert iris("cron", "resume", "greeter", "--user", "telegram:4242").stdout.startswith(
        "resumed:")
    assert "history is kept" in iris("cron", "remove", job_id).stdout
    assert job_id not in iris("cron", "list", "--user", "telegram:4242").stdout
    assert iris("cron", "runs", job_id).stdout.strip() == f"{job_id} has not run yet"


def test_bad_input_is_one_line_and_changes_nothing(iris_home):
    missing = iris("cron", "add", "--user", "alice", "--prompt", "x", ok=False)
    assert missing.exit_code == 1 and "needs --schedule and --prompt" in missing.output
    bad = iris("cron", "add", "--user", "alice", "--schedule", "now and then", "--prompt", "x",
               ok=False)
    assert bad.exit_code == 1 and bad.output.startswith("error: can't understand")
    assert "Traceback" not in bad.output
    unknown = iris("cron", "pause", "job_nope", ok=False)
    assert unknown.exit_code == 1 and "no job with id 'job_nope'" in unknown.output
    assert iris("cron", "list", "--all").stdout.strip() == "no jobs"


def test_tick_runs_due_jobs_and_runs_shows_status_and_delivery(iris_home, env, llm, telegram):
    job_id = add("--name", "greeter")
    llm.reply("hi Ada")
    ticked = iris("cron", "tick", "--at", later(6), "--json")
    report = json.loads(ticked.stdout)
    (run,) = report["cron"]["runs"]
    assert run["job_id"] == job_id and run["status"] == "ok" and run["reply"] == "hi Ada"
    assert report["sweep"]["leases_expired"] >= 0
    assert [m["text"] for m in telegram.sent_messages()] == ["⏰ greeter\n\nhi Ada"]
    (shown,) = json.loads(iris("cron", "runs", job_id, "--json").stdout)
    assert shown["status"] == "ok" and shown["delivery_state"] == "sent"
    assert shown["delivery"]["status"] == "sent" and shown["error"] is None
    again = json.loads(iris("cron", "tick", "--at", later(7), "--json").stdout)
    assert again["cron"]["runs"] == []  # the next slot is 5 minutes after the tick


def test_a_failed_run_shows_its_error_and_the_owner_is_told(iris_home, env, llm, telegram):
    job_id = add("--name", "digest")
    llm.fail(401)
    result = iris("cron", "run", job_id, "--json", ok=False)
    assert result.exit_code == 1
    run = json.loads(result.stdout)
    assert run["status"] == "failed" and run["error"].startswith("auth")
    assert run["delivery"]["status"] == "sent"
    (told,) = telegram.sent_messages()
    assert "“digest”" in told["text"] and "failed" in told["text"]
    line = iris("cron", "runs", "--user", "telegram:4242").stdout
    assert line.startswith(f"{job_id}  run_") and "(manual): failed; error: auth" in line


def test_run_and_tick_need_a_model(iris_home):
    job_id = add()
    for args in (("cron", "run", job_id), ("cron", "tick")):
        result = iris(*args, ok=False)
        assert result.exit_code == 2 and "IRIS_MODEL" in result.output
    assert iris("cron", "runs", job_id).stdout.strip().endswith("has not run yet")


def test_show_by_name_defaults_to_the_user_list_defaults_to(iris_home, monkeypatch):
    monkeypatch.setenv("USER", "dana")
    job_id = iris("cron", "add", "--user", "http:dana", "--schedule", "every 5m", "--prompt",
                  "Say hi", "--name", "greeter").stdout.strip()
    assert "greeter" in iris("cron", "list").stdout
    shown = json.loads(iris("cron", "show", "greeter", "--json").stdout)
    assert shown["id"] == job_id
    assert iris("cron", "pause", "greeter").stdout.startswith(f"paused: {job_id}")
    monkeypatch.setenv("USER", "erin")
    other = iris("cron", "show", "greeter", ok=False)
    assert other.exit_code == 1
