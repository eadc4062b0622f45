"""``iris daytona browser-snapshot`` through the real CLI against the fake Daytona SDK (calls
bound to the installed SDK's signatures, its own Image builder writing the Dockerfile): the
snapshot with Chromium is built once, found the next time, a failed build is reported and not
replaced; a sandbox then created from it is created from that snapshot."""

from __future__ import annotations

import asyncio

import pytest
from click.testing import CliRunner

from iris_testing.sandboxes.fake_daytona import FakeDaytona
from local_dev.cli import cli
from sandboxes import daytona_snapshot
from sandboxes.options import SandboxOptions


@pytest.fixture
def fake(tmp_path, monkeypatch):
    fake = FakeDaytona(tmp_path / "daytona")
    monkeypatch.setattr(daytona_snapshot, "load_sdk", lambda: fake)
    monkeypatch.setenv("IRIS_SANDBOX_BACKEND", "daytona")
    monkeypatch.setenv("IRIS_DAYTONA_API_KEY", "dtn-test")
    return fake


def run(*args):
    return CliRunner().invoke(cli, ["daytona", "browser-snapshot", *args])


def test_the_snapshot_is_built_once_with_chromium_then_found(fake):
    first = run()
    assert first.exit_code == 0, first.output
    assert "Building snapshot 'iris-browser-1'" in first.output
    assert "Now set IRIS_DAYTONA_SNAPSHOT=iris-browser-1" in first.output
    built = fake.snapshots["iris-browser-1"]
    assert built.state == "active"
    assert "chromium" in built.dockerfile and "fonts-liberation" in built.dockerfile
    assert built.dockerfile.startswith("FROM python:3.12")
    assert "Step: WORKDIR /home/daytona" in first.output  # the build's log lines, streamed
    (create,) = fake.recorder.named("SnapshotService.create")
    assert create.kwargs["timeout"] == 0  # a build takes minutes: no client-side limit

    again = run()
    assert again.exit_code == 0, again.output
    assert "already has snapshot 'iris-browser-1' (active)" in again.output
    assert len(fake.recorder.named("SnapshotService.create")) == 1


def test_a_failed_build_is_reported_and_not_built_over(fake):
    fake.snapshot_build_fails = True
    failed = run("--name", "iris-browser-test")
    assert failed.exit_code == 1
    assert "could not build snapshot 'iris-browser-test'" in failed.output
    assert "apt-get install failed" in failed.output
    fake.snapshot_build_fails = False
    again = run("--name", "iris-browser-test")
    assert again.exit_code == 1
    assert "is in state build_failed" in again.output and "delete it" in again.output
    assert len(fake.recorder.named("SnapshotService.create")) == 1


@pytest.mark.process  # the fake sandbox runs the command as a local process
def test_sandboxes_are_then_created_from_the_snapshot(fake, monkeypatch, tmp_path):
    assert run().exit_code == 0
    monkeypatch.setenv("IRIS_DAYTONA_SNAPSHOT", "iris-browser-1")
    said = run()
    assert "IRIS_DAYTONA_SNAPSHOT is iris-browser-1: new sandboxes have Chromium" in said.output
    from sandboxes.daytona_backend import DaytonaSandbox

    box = DaytonaSandbox("alice", sdk=fake, options=SandboxOptions(
        daytona_snapshot="iris-browser-1", daytona_api_key="dtn-test"))
    asyncio.run(box.exec("true"))
    (params,) = fake.recorder.named("CreateSandboxFromSnapshotParams")
    assert params.kwargs["snapshot"] == "iris-browser-1"
