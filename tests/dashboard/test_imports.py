"""Skill import jobs: the stages an import goes through, the report at the end, a failure said
plainly, and each job walled off to its user."""

from __future__ import annotations

import zipfile

import pytest

from core.dashboard.imports import RUNNING_PER_USER, ImportJob, ImportJobs, run_import
from core.errors import IrisUsageError, NotFound
from core.skills.library import SkillLibrary
from tests.core.skills.conftest import skill_md


class Recording(ImportJob):
    """A job that remembers every stage it was in."""

    def __setattr__(self, name, value):
        if name == "stage":
            self.__dict__.setdefault("stages", []).append(value)
        super().__setattr__(name, value)


def test_an_archive_goes_through_its_stages_to_a_report(store, settings, tmp_path):
    alice = store.users.for_account("http:alice")
    archive = tmp_path / "s.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("a/SKILL.md", skill_md("tea-timer", "Times tea. Use when brewing."))
        handle.writestr("b/SKILL.md", skill_md("pot-warmer", "Warms a pot. Use before tea."))
    job = Recording(id="imp_1", user_id=alice, source="upload:s.zip")
    workdir = job.workdir
    run_import(SkillLibrary(store, settings), job, archive=archive)
    assert job.stages == [
        "Waiting to start", "Unpacking the archive", "Found 2 skill(s); checking them",
        "Scanning and storing tea-timer (1 of 2)", "Scanning and storing pot-warmer (2 of 2)",
        "Done"]
    assert job.done and job.error is None
    assert [i.status for i in job.report.items] == ["loaded", "loaded"]
    assert job.report.source == "upload:s.zip"
    assert not workdir.exists()


def test_a_failed_import_says_why(store, settings, tmp_path):
    alice = store.users.for_account("http:alice")
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip at all")
    job = ImportJob(id="imp_2", user_id=alice, source="upload:bad.zip")
    run_import(SkillLibrary(store, settings), job, archive=bad)
    assert job.done and job.stage == "Failed" and "not a readable zip file" in job.error


def test_jobs_belong_to_their_user_and_are_limited():
    jobs = ImportJobs()
    started = [jobs.start("usr_a", f"upload:{n}.zip") for n in range(RUNNING_PER_USER)]
    with pytest.raises(IrisUsageError, match="running already; wait for it to finish"):
        jobs.start("usr_a", "upload:more.zip")
    other = jobs.start("usr_b", "upload:b.zip")
    assert other.user_id == "usr_b"
    assert jobs.get("usr_a", started[0].id) is started[0]
    with pytest.raises(NotFound):
        jobs.get("usr_b", started[0].id)
    started[0].done = True
    later = jobs.start("usr_a", "upload:next.zip")
    assert later.user_id == "usr_a"
    for job in [*started, other, later]:
        job.workdir.rmdir()
