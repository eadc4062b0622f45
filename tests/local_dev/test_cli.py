"""The iris CLI through its real entry point (subprocesses for `iris dev` and `iris chat`)."""

import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from iris_testing.llm_server import ScriptedLLM
from iris_testing.server import free_port, serve
from iris_testing.waiting import answers, wait_until
from local_dev.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def test_help_lists_the_commands():
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    for name in ("dev", "chat", "run", "config"):
        assert name in result.output


def test_config_show_masks_secrets(monkeypatch):
    monkeypatch.setenv("IRIS_MODEL_API_KEY", "sk-verysecretkey-123456")
    monkeypatch.setenv("IRIS_MODEL", "openai/gpt-4o-mini")
    result = CliRunner().invoke(cli, ["config", "show"])
    assert result.exit_code == 0
    assert "verysecret" not in result.output
    assert "model_api_key: sk-…56 (set)" in result.output


def test_config_show_names_the_demo_model_when_no_model_is_set(monkeypatch):
    result = CliRunner().invoke(cli, ["config", "show"])
    assert ("model: openai/smollm2-135m-instruct (set by iris dev: not configured, so the "
            "embedded demo model answers") in result.output
    # the values the demo runs with, not the defaults it replaces
    assert "max_output_tokens: 128 (set by iris dev; configured: not set)" in result.output
    assert "interactive_first: True (set by iris dev; configured: False)" in result.output
    assert "owner_accounts: ['http:" in result.output
    monkeypatch.setenv("IRIS_MODEL", "openai/gpt-4o-mini")
    configured = CliRunner().invoke(cli, ["config", "show"]).output
    assert "model: openai/gpt-4o-mini\n" in configured
    assert "max_output_tokens: (not set)\n" in configured
    assert "interactive_first: False\n" in configured


def test_bad_config_is_one_line_and_exit_2(monkeypatch):
    monkeypatch.setenv("IRIS_DB_URL", "mysql://nope")
    result = CliRunner().invoke(cli, ["config", "show"])
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0
    assert result.output.startswith("config error: IRIS_DB_URL:")
    assert "Traceback" not in result.output


def test_chat_without_a_server_is_a_clear_error():
    result = CliRunner().invoke(cli, ["chat", "-m", "hi", "--url", f"http://127.0.0.1:{free_port()}"])
    assert result.exit_code == 1
    assert "cannot reach Iris" in result.output


def test_dev_without_model_or_embedded_model_explains(monkeypatch):
    from local_dev import engines

    monkeypatch.setattr(engines, "available", lambda: None)  # as on a machine without one
    result = CliRunner().invoke(cli, ["dev", "--port", str(free_port())])
    assert result.exit_code == 1
    assert "IRIS_MODEL" in result.output and "make run" in result.output


def wait_healthy(url, process):
    def healthy():
        assert process.poll() is None, process.stdout.read()
        return answers(f"{url}/healthz")

    wait_until(healthy, "iris dev to answer /healthz")


def test_iris_dev_and_chat_as_a_user_runs_them(iris_home):
    llm = ScriptedLLM()
    llm.tool_call("clock", {"timezone": "UTC"}).reply("Hi from the scripted model.")
    with serve(llm.app) as model:
        port = free_port()
        env = {
            **os.environ, "IRIS_HOME": str(iris_home), "IRIS_MODEL": "openai/scripted-model",
            "IRIS_MODEL_API_BASE": f"{model.url}/v1", "IRIS_MODEL_API_KEY": "x",
        }
        iris = [sys.executable, "-m", "local_dev.cli"]
        dev = subprocess.Popen([*iris, "dev", "--port", str(port)], env=env, cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_healthy(url, dev)
            assert (iris_home / "dev-api-key").exists()
            answer = subprocess.run([*iris, "chat", "--url", url, "-m", "hello"], env=env,
                                    cwd=ROOT, capture_output=True, text=True, timeout=60)
            assert answer.returncode == 0, answer.stderr
            assert answer.stdout.strip() == "Hi from the scripted model."
            repl = subprocess.run([*iris, "chat", "--url", url], env=env, cwd=ROOT,
                                  input="/new\n/exit\n", capture_output=True, text=True,
                                  timeout=60)
            assert "Started a new session." in repl.stdout
            assert "tiny offline demo model" not in repl.stdout
        finally:
            dev.terminate()
            dev.wait(timeout=15)
    assert len(llm.requests) == 2
