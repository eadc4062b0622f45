"""/memory: the stores as they are now, the archive, restoring from it."""

from iris_testing.scripted_model import call, tool_calls
from tests.core.memory.test_snapshot import send


def test_memory_command_shows_searches_and_restores(runtime, scripted):
    scripted.then(
        tool_calls(call("memory", operations=[
            {"action": "add", "content": "Deploys run from infra/deploy.sh."},
            {"action": "add", "target": "user", "content": "Prefers tabs."}])), "ok",
        tool_calls(call("memory", action="remove", old_text="deploy.sh")), "ok",
    )
    send(runtime, "note these", "1")
    send(runtime, "drop the deploy note", "2")
    shown = send(runtime, "/memory", "3").reply
    assert shown.startswith("MEMORY [0% — 0/2,200 chars]\n(empty)")
    assert "USER PROFILE [1% — 13/1,375 chars]\n1. [you] Prefers tabs." in shown
    assert shown.endswith("/forget TEXT or N removes an entry.")  # the model can also save
    assert "1 archived entries" in shown
    found = send(runtime, "/memory archive deploy", "4").reply
    assert "[memory, removed" in found and "Deploys run from infra/deploy.sh." in found
    archive_id = found.split()[0]
    restored = send(runtime, f"/memory restore {archive_id}", "5").reply
    assert restored.startswith(f"Restored {archive_id}. Added to memory.")
    assert "Deploys run" in send(runtime, "/memory", "6").reply
    assert send(runtime, "/memory archive", "7").reply == "The archive is empty."
    assert send(runtime, "/memory restore arc_nope", "8").reply.startswith("Not restored:")
    assert send(runtime, "/memory frobnicate", "9").reply.startswith("Usage: /memory")
    assert len(scripted.requests) == 4  # commands cost no model call
