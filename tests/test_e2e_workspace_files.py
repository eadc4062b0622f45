"""End to end over real HTTP (the openai client → the emulator → litellm → a scripted model):
workspace file tools cannot be led outside the workspace by a script racing them, a named
pipe stalls nobody, and a sparse gigabyte costs the server no memory to answer about."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import openai

from iris_testing.llm_server import ScriptedLLM, ToolCall, ToolCalls
from tests.fakes.stack import API_KEY, emulator_stack

ROOT = Path(__file__).resolve().parents[1]
ISOLATION = "bwrap" if shutil.which("bwrap") else "none"  # as execute_code runs in CI
ROUNDS = 200

RACE = '''
import json, os, subprocess, sys
from iris_tools import ToolError, read_file, write_file
os.makedirs("d", exist_ok=True)
with open("d/secret.txt", "w") as handle:
    handle.write("inside")
os.symlink(HOST, "l")
racer = subprocess.Popen([sys.executable, "-c", """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
print("ready", flush=True)
while True:
    libc.renameat2(-100, b"d", -100, b"l", 2)
"""], stdout=subprocess.PIPE)
racer.stdout.readline()
seen = {}
for n in range(ROUNDS):
    for name, call in (("read", lambda: read_file("d/secret.txt")),
                       ("write", lambda: write_file(f"d/w{n}.txt", "x"))):
        try:
            out = call()
            key = name + (" HOST" if "HOST SECRET" in out else " ok")
        except ToolError as exc:
            key = name + (" link" if "symbolic link" in str(exc) else " error")
        seen[key] = seen.get(key, 0) + 1
racer.kill()
print("SEEN", json.dumps(seen, sort_keys=True))
'''


def ask(client, text: str, user: str) -> str:
    answer = client.chat.completions.create(
        model="iris", messages=[{"role": "user", "content": text}], user=user)
    return answer.choices[0].message.content or ""


def last_tool_result(body: dict) -> str:
    return str(body["messages"][-1]["content"])


def test_a_racing_script_never_reads_or_writes_outside_the_workspace(monkeypatch, tmp_path):
    host = tmp_path / "host"
    host.mkdir()
    (host / "secret.txt").write_text("HOST SECRET")
    code = RACE.replace("HOST", repr(str(host)), 1).replace("ROUNDS", str(ROUNDS))
    llm = ScriptedLLM()
    with emulator_stack(llm, monkeypatch, IRIS_SANDBOX_ISOLATION=ISOLATION,
                        IRIS_EXECUTE_CODE_MAX_CALLS="1000") as stack:
        (llm.tool_call("load_tools", {"names": ["execute_code"]})
         .tool_call("execute_code", {"code": code})
         .reply("Raced."))
        patient = openai.OpenAI(base_url=f"{stack.url}/v1", api_key=API_KEY, max_retries=0,
                                timeout=600)  # 400 tool calls on a loaded machine
        assert ask(patient, "Race your files.", "mallory") == "Raced."
        ran = last_tool_result(llm.requests[-1])
    assert "SEEN" in ran, ran
    seen = json.loads(ran.split("SEEN ", 1)[1].split("\n", 1)[0])
    assert set(seen) <= {"read ok", "read link", "write ok", "write link"}, seen
    assert sum(seen.values()) == 2 * ROUNDS, seen
    assert seen.get("read ok", 0) > 0 and seen.get("read link", 0) > 0, seen  # both sides met
    assert sorted(p.name for p in host.iterdir()) == ["secret.txt"]


def release(pipe: Path) -> None:
    with contextlib.suppress(OSError):
        os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))


def test_pipes_of_eight_users_stall_no_one(monkeypatch):
    llm = ScriptedLLM()

    def answer(body: dict) -> object:
        last = body["messages"][-1]
        if last["role"] == "user":
            return ToolCalls((ToolCall("read_file", {"path": last["content"]}),))
        return f"tool said: {last_tool_result(body)[:300]}"

    llm.handler = answer
    with emulator_stack(llm, monkeypatch) as stack:
        assert ask(stack.client, "missing.txt", "warmup").startswith("tool said:")
        spaces = stack.runtime.settings.home / "workspaces"
        pipes = []
        for n in range(8):
            user_id = stack.runtime.store.users.for_account(f"http:pipe{n}")
            (spaces / user_id).mkdir(parents=True, exist_ok=True)
            os.mkfifo(spaces / user_id / "p")
            pipes.append(spaces / user_id / "p")
        carol = stack.runtime.store.users.for_account("http:carol")
        (spaces / carol).mkdir(parents=True, exist_ok=True)
        (spaces / carol / "notes.txt").write_text("carol's notes\n")
        try:
            with ThreadPoolExecutor(16) as pool:
                stalls = [pool.submit(ask, stack.client, "p", f"pipe{n}") for n in range(8)
                          for _ in range(2)]
                assert "carol's notes" in ask(stack.client, "notes.txt", "carol")
                for stall in stalls:
                    assert "named pipe (FIFO)" in stall.result(timeout=120)
        finally:
            for pipe in pipes:
                release(pipe)


PROBE = """
import json, os, sys
from pathlib import Path
from iris_testing.llm_server import ScriptedLLM, ToolCall, ToolCalls
from iris_testing.server import serve
from core.config import load_settings
from local_dev.emulator import build_emulator
from tests.fakes.stack import API_KEY, scripted_env
import openai

def hwm():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])

llm = ScriptedLLM()
def answer(body):
    last = body["messages"][-1]
    if last["role"] == "user":
        return ToolCalls((ToolCall("read_file", {"path": last["content"]}),))
    return "tool said: " + str(last["content"])[:300]
llm.handler = answer
with serve(llm.app) as model:
    os.environ.update(scripted_env(model.url))
    emulator = build_emulator(load_settings())
    with serve(emulator.app(tick_seconds=3600)) as iris:
        client = openai.OpenAI(base_url=iris.url + "/v1", api_key=API_KEY, max_retries=0,
                               timeout=120)
        def ask(text):
            return client.chat.completions.create(model="iris", user="alice",
                messages=[{"role": "user", "content": text}]).choices[0].message.content
        user_id = emulator.runtime.store.users.for_account("http:alice")
        space = emulator.runtime.settings.home / "workspaces" / user_id
        space.mkdir(parents=True, exist_ok=True)
        (space / "small.txt").write_text("hello\\n")
        with open(space / "big.txt", "wb") as handle:
            handle.truncate(1 << 30)
        first = ask("small.txt")
        before = hwm()
        second = ask("big.txt")
        after = hwm()
print(json.dumps({"first": first, "second": second, "before": before, "after": after}))
"""


def test_a_sparse_gigabyte_costs_the_server_no_memory(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("IRIS_")}
    env.update(PYTHONPATH=str(ROOT), IRIS_HOME=str(tmp_path / "home"))
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         cwd=ROOT, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert "hello" in seen["first"]
    assert "binary file (1073741824 bytes)" in seen["second"], seen
    assert seen["after"] - seen["before"] < 50 * 1024, seen  # VmHWM, in kB
