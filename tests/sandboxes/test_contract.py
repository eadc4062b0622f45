"""Behaviour every backend must share: local, Modal (faked SDK) and Daytona (faked SDK)."""

from __future__ import annotations

import asyncio

import pytest

from sandboxes import (
    TIMEOUT_EXIT_CODE,
    DirEntry,
    ExecResult,
    FileStat,
    FileTooLarge,
    NotARegularFile,
    PathOutsideWorkspace,
    SandboxFileNotFound,
    SandboxOptions,
)
from tests.sandboxes.conftest import Backend

pytestmark = [pytest.mark.anyio, pytest.mark.process]


def output(result: ExecResult) -> str:
    return result.stdout + result.stderr


async def test_exec_echo(backend: Backend) -> None:
    result = await backend.make().exec("echo hi")
    assert result.exit_code == 0
    assert result.stdout == "hi\n"
    assert not result.timed_out and not result.truncated
    assert result.duration >= 0


async def test_exit_codes(backend: Backend) -> None:
    sandbox = backend.make()
    assert (await sandbox.exec("exit 3")).exit_code == 3
    assert (await sandbox.exec("false")).exit_code == 1
    assert (await sandbox.exec("true")).exit_code == 0


async def test_stderr(backend: Backend) -> None:
    result = await backend.make().exec("echo out; echo oops >&2; exit 2")
    assert result.exit_code == 2
    if backend.separate_stderr:
        assert (result.stdout, result.stderr) == ("out\n", "oops\n")
    else:
        assert "out\n" in result.stdout and "oops\n" in result.stdout
        assert result.stderr == ""


async def test_cwd(backend: Backend) -> None:
    sandbox = backend.make()
    await sandbox.write_file("sub/dir/marker.txt", b"x")
    assert (await sandbox.exec("ls")).stdout.split() == ["sub"]
    assert (await sandbox.exec("ls", cwd="sub/dir")).stdout.split() == ["marker.txt"]
    with pytest.raises(PathOutsideWorkspace):
        await sandbox.exec("ls", cwd="../..")


async def test_env_passing(backend: Backend) -> None:
    result = await backend.make().exec(
        'echo "$GREETING-$OTHER"', env={"GREETING": "hello world", "OTHER": "2"}
    )
    assert result.stdout == "hello world-2\n"


async def test_timeout(backend: Backend) -> None:
    result = await backend.make().exec("sleep 5; echo late", timeout=1)
    assert result.timed_out
    assert result.exit_code == TIMEOUT_EXIT_CODE
    assert "late" not in output(result)


async def test_a_timed_out_command_keeps_its_output(backend: Backend) -> None:
    result = await backend.make().exec(
        "echo started; echo halfway >&2; sleep 60; echo finished", timeout=1
    )
    assert result.timed_out and result.exit_code == TIMEOUT_EXIT_CODE
    # cut at the time limit: what follows the sleep never ran
    assert result.stdout == "started\n" and result.stderr == "halfway\n"


async def test_output_is_capped(backend: Backend) -> None:
    sandbox = backend.make(options=SandboxOptions(output_limit=1000))
    result = await sandbox.exec("seq 1 2000")
    assert result.truncated
    assert result.stdout.startswith("1\n2\n3\n")
    assert result.stdout.endswith("1999\n2000\n")
    assert "omitted" in result.stdout
    assert len(result.stdout) < 1100


async def test_write_read_list_round_trip(backend: Backend) -> None:
    sandbox = backend.make()
    binary = bytes(range(256))
    await sandbox.write_file("notes.txt", b"hello")
    await sandbox.write_file("data/blob.bin", binary)
    await sandbox.write_file("notes.txt", b"hello again")
    assert await sandbox.read_file("notes.txt") == b"hello again"
    assert await sandbox.read_file("./data/../data/blob.bin") == binary
    listing = await sandbox.list_dir()
    assert [entry.name for entry in listing] == ["data", "notes.txt"]
    assert listing[1] == DirEntry(name="notes.txt", is_dir=False, size=11)
    assert listing[0].is_dir
    assert await sandbox.list_dir("data") == [DirEntry("blob.bin", False, 256)]


async def test_files_and_commands_share_the_workspace(backend: Backend) -> None:
    sandbox = backend.make()
    await sandbox.exec("mkdir -p made && printf 'from a command' > made/out.txt")
    assert await sandbox.read_file("made/out.txt") == b"from a command"
    await sandbox.write_file("script.sh", b"echo from a file\n")
    assert (await sandbox.exec("bash script.sh")).stdout == "from a file\n"


async def test_missing_files(backend: Backend) -> None:
    sandbox = backend.make()
    with pytest.raises(SandboxFileNotFound):
        await sandbox.read_file("nope.txt")
    with pytest.raises(FileNotFoundError):
        await sandbox.list_dir("no-such-dir")


@pytest.mark.parametrize("path", ["../escape.txt", "a/../../escape.txt", "/etc/passwd"])
async def test_paths_outside_are_refused(backend: Backend, path: str) -> None:
    sandbox = backend.make()
    with pytest.raises(PathOutsideWorkspace):
        await sandbox.read_file(path)
    with pytest.raises(PathOutsideWorkspace):
        await sandbox.write_file(path, b"x")
    with pytest.raises(PathOutsideWorkspace):
        await sandbox.list_dir(path)


async def test_persists_across_sandbox_objects(backend: Backend) -> None:
    await backend.make().write_file("kept.txt", b"still here")
    again = backend.make()
    assert await again.read_file("kept.txt") == b"still here"
    assert (await again.exec("cat kept.txt")).stdout == "still here"


async def test_hibernate_resume_keeps_files_and_reports_status(backend: Backend) -> None:
    sandbox = backend.make()
    assert await sandbox.status() == ("absent" if backend.hibernates else "running")
    await sandbox.write_file("work/state.txt", b"42")
    assert await sandbox.status() == "running"

    await sandbox.hibernate()
    asleep = "hibernated" if backend.hibernates else "running"
    assert await sandbox.status() == asleep
    assert await backend.make().status() == asleep
    await sandbox.hibernate()
    assert await sandbox.status() == asleep

    await sandbox.resume()
    assert await sandbox.status() == "running"
    assert await sandbox.read_file("work/state.txt") == b"42"


async def test_use_after_hibernate_wakes_the_sandbox(backend: Backend) -> None:
    await backend.make().write_file("a.txt", b"1")
    await backend.make().hibernate()
    fresh = backend.make()
    assert (await fresh.exec("cat a.txt")).stdout == "1"
    assert await fresh.status() == "running"


async def test_users_are_isolated(backend: Backend) -> None:
    alice, bob = backend.make("alice"), backend.make("bob")
    await alice.write_file("secret.txt", b"alice only")
    await bob.write_file("mine.txt", b"bob")
    with pytest.raises(SandboxFileNotFound):
        await bob.read_file("secret.txt")
    assert [entry.name for entry in await bob.list_dir()] == ["mine.txt"]
    assert (await bob.exec("ls")).stdout.split() == ["mine.txt"]
    await bob.hibernate()
    assert await alice.read_file("secret.txt") == b"alice only"


@pytest.mark.parametrize("user_id", ["", "../x", "a/b", ".hidden", "x" * 60, "sp ace"])
def test_user_ids_are_validated(backend: Backend, user_id: str) -> None:
    with pytest.raises(ValueError):
        backend.make(user_id)


async def test_stat_read_range_and_read_limits(backend: Backend) -> None:
    sandbox = backend.make()
    data = bytes(range(256)) * 40  # 10,240 bytes, every byte value
    await sandbox.write_file("big/blob.bin", data)
    assert await sandbox.stat("big/blob.bin") == FileStat(kind="file", size=len(data))
    assert (await sandbox.stat("big")).kind == "dir"
    window = await sandbox.read_range("big/blob.bin", 1000, 3000)
    assert (window.data, window.offset, window.size) == (data[1000:4000], 1000, len(data))
    tail = await sandbox.read_range("big/blob.bin", len(data) - 5, 100)
    assert tail.data == data[-5:]
    assert (await sandbox.read_range("big/blob.bin", len(data) + 10, 100)).data == b""
    with pytest.raises(FileTooLarge):
        await sandbox.read_file("big/blob.bin", max_bytes=len(data) - 1)
    assert await sandbox.read_file("big/blob.bin", max_bytes=len(data)) == data
    with pytest.raises(SandboxFileNotFound):
        await sandbox.stat("nothing-here")
    with pytest.raises(NotARegularFile, match="directory"):
        await sandbox.read_range("big", 0, 10)


async def test_a_named_pipe_is_refused_at_once(backend: Backend) -> None:
    sandbox = backend.make()
    assert (await sandbox.exec("mkfifo pipe")).exit_code == 0
    assert (await sandbox.stat("pipe")).kind == "fifo"
    for read in (sandbox.read_file("pipe"), sandbox.read_range("pipe", 0, 10)):
        with pytest.raises(NotARegularFile, match="named pipe"):
            await asyncio.wait_for(read, 20)
