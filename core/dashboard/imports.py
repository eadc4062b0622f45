"""Skill imports started from the dashboard: a zip upload or a git URL, run in a thread while
the page shows its stage. Jobs live in this process's memory (the page that shows one is
served by the process that runs it); each belongs to one user, and another user's job is
``NotFound``."""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import IrisUsageError, NotFound
from core.ids import new_id
from core.skills.git_fetch import CheckedRepo, clone
from core.skills.importer import ImportReport, import_skills

if TYPE_CHECKING:
    from core.skills.library import SkillLibrary

KEEP_JOBS = 200
RUNNING_PER_USER = 1  # and across processes: core.skills.import_slot


@dataclass
class ImportJob:
    id: str
    user_id: str
    source: str
    stage: str = "Waiting to start"
    done: bool = False
    error: str | None = None
    report: ImportReport | None = None
    workdir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="iris-import-")))


class ImportJobs:
    def __init__(self) -> None:
        self._jobs: OrderedDict[str, ImportJob] = OrderedDict()
        self._lock = threading.Lock()

    def start(self, user_id: str, source: str) -> ImportJob:
        with self._lock:
            running = sum(1 for j in self._jobs.values() if j.user_id == user_id and not j.done)
            if running >= RUNNING_PER_USER:
                raise IrisUsageError("an import of yours is running already; wait for it to "
                                     "finish (one import at a time)")
            job = ImportJob(id=new_id("imp"), user_id=user_id, source=source)
            self._jobs[job.id] = job
            while len(self._jobs) > KEEP_JOBS:
                oldest = next((k for k, j in self._jobs.items() if j.done), None)
                if oldest is None:
                    break
                del self._jobs[oldest]
            return job

    def get(self, user_id: str, job_id: str) -> ImportJob:
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None or job.user_id != user_id:
            raise NotFound("no such import here (it may have run on another server, or "
                           "long ago)")
        return job


def run_import(library: SkillLibrary, job: ImportJob, *, archive: Path | None = None,
               repo: CheckedRepo | None = None) -> None:
    """Fetch (clone), unpack, scan and store; the job records each stage, then the report or
    the error. Blocking: run it in a thread. Removes the job's files at the end."""

    def stage(text: str) -> None:
        job.stage = text

    try:
        if repo is not None:
            stage(f"Cloning {repo.url}")
            target = job.workdir / "repo"
            clone(repo, target, progress=stage)
            source = str(target)
        elif archive is not None:
            stage("Unpacking the archive")
            source = str(archive)
        else:
            raise IrisUsageError("nothing to import")
        job.report = import_skills(library, job.user_id, source, label=job.source,
                                   progress=stage)
        stage("Done")
    except IrisUsageError as exc:
        job.error = str(exc)
        stage("Failed")
    except Exception as exc:  # a bug must still end the job, and say so
        job.error = f"the import failed: {type(exc).__name__}"
        stage("Failed")
        raise
    finally:
        shutil.rmtree(job.workdir, ignore_errors=True)
        job.done = True
