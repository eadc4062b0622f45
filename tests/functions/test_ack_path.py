"""Nothing heavy on the ack path: a fresh process builds the web app as a container does and
acknowledges Telegram, Slack, WhatsApp, Discord, email, LINE, SMS and Matrix messages and /stop
(tests/functions/ack_probe.py); the turn machinery, the model client, MCP, the cloud SDKs and
numpy never load, and a platform SDK loads only to send /stop's own answer."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NEVER = {"litellm", "mcp", "modal", "daytona", "boto3", "openai", "core.turn.loop", "core.tools",
         "core.contracts.toolkit", "numpy", "jinja2", "functions.dashboard"}


def probe(tmp_path, *, preload: str = "") -> dict:
    code = f"{preload}import runpy, sys; sys.argv = ['ack_probe', {str(tmp_path)!r}]; " \
           "runpy.run_module('tests.functions.ack_probe', run_name='__main__')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_acks_load_no_heavy_module(tmp_path):
    seen = probe(tmp_path)
    assert seen["statuses"] == [200] * 11
    assert seen["drained"] == 9  # the nine messages were handed to the (recording) dispatcher
    assert seen["after_messages"] == []
    # sending /stop's answers (python-telegram-bot and slack_sdk use httpx)
    assert set(seen["after_stop"]) <= {"telegram", "slack_sdk", "httpx"}
    assert not NEVER & set(seen["after_stop"])


def test_the_probe_sees_a_heavy_import(tmp_path):
    seen = probe(tmp_path, preload="import core.turn.loop; ")
    assert "core.turn.loop" in seen["after_messages"]


def test_teams_and_google_chat_acks_load_no_turn_machinery(tmp_path):
    code = f"import runpy, sys; sys.argv = ['ack_probe_jwt', {str(tmp_path)!r}]; " \
           "runpy.run_module('tests.functions.ack_probe_jwt', run_name='__main__')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=120, check=True)
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["statuses"] == [202, 200] and seen["drained"] == 2
    # httpx fetches the signing keys on each platform's first request (then they are cached)
    assert set(seen["imported"]) <= {"httpx"}
