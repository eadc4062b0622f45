"""End to end over real HTTP: the openai client → the emulator → litellm → a scripted model whose
execute_code script calls three tools in the user's workspace, and only there."""

import shutil

import pytest

from iris_testing.llm_server import ScriptedLLM
from tests.fakes.stack import emulator_stack

SCRIPT = '''
from iris_tools import read_file, terminal, write_file
write_file("tides/wash.txt", "07:12 high\\n13:30 low\\n19:41 high\\n")
highs = [line for line in read_file("tides/wash.txt").splitlines() if "high" in line]
count = terminal("grep -c high tides/wash.txt")
print(f"{len(highs)} high tides; grep says {count.split('stdout:')[1].split()[0]}")
'''


@pytest.fixture
def llm():
    return ScriptedLLM()


def ask(client, text, user):
    answer = client.chat.completions.create(
        model="iris", messages=[{"role": "user", "content": text}], user=user
    )
    return answer.choices[0].message.content


def tool_results(llm):
    return [m["content"] for m in llm.requests[-1]["messages"] if m["role"] == "tool"]


def test_a_script_calls_three_tools_in_its_users_workspace_only(llm, monkeypatch):
    isolation = "bwrap" if shutil.which("bwrap") else "none"  # as terminal commands run
    with emulator_stack(llm, monkeypatch, IRIS_SANDBOX_ISOLATION=isolation) as stack:
        client, rt = stack.client, stack.runtime
        llm.reply("Hello Bob.")
        assert ask(client, "Hi", "bob") == "Hello Bob."
        (llm.tool_call("load_tools", {"names": ["execute_code"]})
         .tool_call("execute_code", {"code": SCRIPT})
         .reply("Three tides today, two of them high."))
        assert ask(client, "Note today's tides at the Wash.", "alice") == (
            "Three tides today, two of them high.")
        names = [t["function"]["name"] for t in llm.requests[-1]["tools"]]
        assert names[-1] == "execute_code"
        loaded, ran = tool_results(llm)
        assert loaded == "Loaded execute_code: call it directly from now on."
        assert ran.startswith('<untrusted source="execute_code">')
        assert "stdout:\n2 high tides; grep says 2\n" in ran
        assert "tool calls made by the script: 3 of 50" in ran
        assert "07:12" not in ran  # the tools' answers went to the script, not the model

        alice = rt.store.users.resolve("http:alice")
        bob = rt.store.users.resolve("http:bob")
        spaces = rt.settings.home / "workspaces"
        assert (spaces / alice / "tides" / "wash.txt").read_text().count("high") == 2
        assert sorted(p.name for p in (spaces / alice).iterdir()) == ["tides"]
        assert not (spaces / bob).exists() or not any((spaces / bob).iterdir())

        llm.tool_call("execute_code", {"code": SCRIPT.replace("write_file(", "print(")}).reply(
            "No tides file here.")
        assert ask(client, "Read the tides.", "bob") == "No tides file here."
        (failed,) = tool_results(llm)[-1:]
        assert "iris_tools.ToolError: no such file in the workspace: 'tides/wash.txt'" in failed
        assert not (spaces / bob / "tides").exists()
