import asyncio
from dataclasses import replace

import pytest

from core.acting.workspaces import Workspaces, hibernates_after_turn, sandbox_options
from core.messages import InboundMessage
from functions.ingress import receive
from iris_testing.scripted_model import call, tool_calls
from sandboxes.modal_backend import ModalSandbox
from tests.sandboxes.fakes import FakeModal


def send(rt, text, pmid):
    message = InboundMessage(platform="http", chat_id="alice", account="http:alice",
                             platform_message_id=pmid, text=text)

    async def go():
        received = await receive(rt, message)
        await rt.dispatcher.idle()
        return rt.store.inbox.get(received.user_id, received.entry_id)

    return asyncio.run(go())


def modal_workspaces(settings, store, fake):
    settings = settings.model_copy(update={"sandbox_backend": "modal"})
    spaces = Workspaces(settings, store)
    spaces._opener = lambda user_id: ModalSandbox(
        user_id, state=spaces.state, options=sandbox_options(settings), sdk=fake
    )
    return spaces


def test_settings_reach_the_sandbox_options(settings):
    configured = settings.model_copy(update={
        "max_tool_output_chars": 12_345, "sandbox_timeout": 42.0, "sandbox_idle_minutes": 20,
        "sandbox_modal_app": "my-boxes", "sandbox_image": "ubuntu:24.04",
        "daytona_target": "eu", "daytona_snapshot": "snap-1",
    })
    options = sandbox_options(configured)
    assert (options.output_limit, options.default_timeout) == (12_345, 42.0)
    assert (options.modal_app_name, options.modal_idle_timeout) == ("my-boxes", 1200)
    assert options.daytona_auto_stop_interval == 20
    assert (options.daytona_image, options.daytona_target, options.daytona_snapshot) == (
        "ubuntu:24.04", "eu", "snap-1")


@pytest.mark.parametrize(
    ("backend", "setting", "expected"),
    [("modal", None, True), ("local", None, False), ("daytona", None, False),
     ("daytona", True, True), ("modal", False, False)],
)
def test_hibernate_after_turn_defaults(settings, backend, setting, expected):
    configured = settings.model_copy(update={
        "sandbox_backend": backend, "sandbox_hibernate_after_turn": setting})
    assert hibernates_after_turn(configured) is expected


@pytest.mark.process  # starts a child process (make check runs without them)
def test_a_modal_sandbox_used_by_a_turn_is_snapshotted_after_it(runtime, scripted, tmp_path):
    fake = FakeModal(tmp_path / "modal")
    runtime.services = replace(runtime.services,
                               workspaces=modal_workspaces(runtime.settings, runtime.store, fake))
    scripted.then(
        tool_calls(call("write_file", path="notes/todo.txt", content="buy milk\n")), "Saved.",
    )
    entry = send(runtime, "remember to buy milk in a file", "1")
    assert entry.reply == "Saved."
    names = fake.recorder.names()
    assert names[-2:] == ["Sandbox.snapshot_filesystem", "Sandbox.terminate"]
    (image_id,) = fake.images
    row = runtime.store.db.one("SELECT user_id, backend, state FROM sandbox_state")
    assert row == {"user_id": entry.user_id, "backend": "modal",
                   "state": f'{{"image_id": "{image_id}"}}'}

    # A new container: nothing in memory, the snapshot id comes from the database.
    runtime.services = replace(runtime.services,
                               workspaces=modal_workspaces(runtime.settings, runtime.store, fake))
    fake.recorder.clear()
    scripted.then(tool_calls(call("read_file", path="notes/todo.txt")), "You need milk.")
    send(runtime, "what was on my list?", "2")
    assert "buy milk" in scripted.requests[-1][-1].content
    assert fake.recorder.named("Image.from_id")[0].args == (image_id,)


def test_a_turn_without_sandbox_tools_leaves_it_alone(runtime, scripted, tmp_path):
    fake = FakeModal(tmp_path / "modal")
    runtime.services = replace(runtime.services,
                               workspaces=modal_workspaces(runtime.settings, runtime.store, fake))
    scripted.then("Hi.")
    send(runtime, "hello", "1")
    assert fake.recorder.names() == []


def test_settle_waits_for_operations_in_flight(settings, store, tmp_path):
    fake = FakeModal(tmp_path / "modal")
    spaces = modal_workspaces(settings, store, fake)

    async def go():
        async with spaces.use("u1") as box:
            await box.write_file("a.txt", b"a")
            assert await spaces.settle("u1") is False
        assert spaces.was_used("u1")
        assert await spaces.settle("u1") is True
        assert await spaces.settle("u1") is False

    asyncio.run(go())
    assert fake.recorder.names().count("Sandbox.snapshot_filesystem") == 1


def test_local_sandboxes_are_not_hibernated(settings, store):
    spaces = Workspaces(settings, store)

    async def go():
        async with spaces.use("u1") as box:
            await box.write_file("a.txt", b"a")
        return await spaces.settle("u1")

    assert asyncio.run(go()) is False
    assert not spaces.was_used("u1")


def test_a_cloud_worker_never_runs_commands_itself(store, settings, iris_home):
    from tests.core.acting.support import call, make_ctx

    cloud = settings.model_copy(update={"dispatcher": "modal", "sandbox_backend": "local"})
    ctx = make_ctx(store, cloud)
    out = call(ctx, "terminal", command="touch ran-here")
    assert out.startswith("Error: the workspace is not available: in the cloud")
    assert not (iris_home / "workspaces" / ctx.user_id / "ran-here").exists()


def test_a_workspace_that_had_to_start_empty_is_told_to_the_model_and_user(
    runtime, scripted, tmp_path
):
    fake = FakeModal(tmp_path / "modal")
    runtime.services = replace(runtime.services,
                               workspaces=modal_workspaces(runtime.settings, runtime.store, fake))
    scripted.then(tool_calls(call("write_file", path="notes.txt", content="mine\n")), "Saved.")
    send(runtime, "save a note", "1")
    (image_id,) = fake.images
    fake.expire(image_id)  # Modal dropped the snapshot (its ttl passed)

    runtime.services = replace(runtime.services,
                               workspaces=modal_workspaces(runtime.settings, runtime.store, fake))
    scripted.then(tool_calls(call("read_file", path="notes.txt")),
                  "Your workspace expired and starts empty; the note is gone.")
    entry = send(runtime, "read my note", "2")
    told = scripted.requests[-1][-1].content
    assert "could not be restored" in told and "starts empty" in told and "Tell the user" in told
    assert "expired" in told
    assert entry.reply.startswith("Your workspace expired")
