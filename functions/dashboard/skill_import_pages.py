"""Skills: import from a zip upload or a git URL (the page follows the import's stages), and
quarantined imports to review (each finding at its file and line) and approve or reject, with
the functions ``iris skills review|approve|reject`` use."""

from __future__ import annotations

import asyncio
import logging
import shutil
from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData, UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from core.dashboard.imports import ImportJob, ImportJobs, run_import
from core.errors import IrisUsageError, TookTooLong
from core.lanes import blocking
from core.skills import quarantine
from core.skills.git_fetch import CheckedRepo, check_repo_url
from core.skills.library import SkillLibrary
from core.web.fetch import FetchPolicy
from functions.dashboard.guard import Viewer, back, form_checked, notice, own, runtime
from functions.dashboard.web import MAX_FORM_FIELD, page, render

log = logging.getLogger("iris.dashboard")
MAX_UPLOAD_BYTES = 20 * 1024 * 1024
SHOWN_LINE = 160


def _jobs(request: Request) -> ImportJobs:
    jobs: ImportJobs = request.app.state.imports
    return jobs


def _library(request: Request) -> SkillLibrary:
    rt = runtime(request)
    return SkillLibrary(rt.store, rt.settings)


def _save_upload(upload: UploadFile, job: ImportJob) -> Path:
    target = job.workdir / "upload.zip"
    written = 0
    with target.open("wb") as out:
        while chunk := upload.file.read(65536):
            written += len(chunk)
            if written > MAX_UPLOAD_BYTES:
                raise IrisUsageError(f"the archive is over {MAX_UPLOAD_BYTES // 2**20} MiB")
            out.write(chunk)
    if not written:
        raise IrisUsageError("the uploaded file is empty")
    return target


async def start_import(request: Request) -> Response:
    """POST a zip (``archive``) or a git URL (``url``): start the import, show its stages."""
    declared = request.headers.get("content-length", "")
    if not declared.isdigit():
        raise HTTPException(411, "the upload needs a Content-Length")
    if int(declared) > MAX_UPLOAD_BYTES + MAX_FORM_FIELD:
        raise HTTPException(413, f"the archive is over {MAX_UPLOAD_BYTES // 2**20} MiB")
    form = await request.form(max_files=1, max_fields=5, max_part_size=MAX_FORM_FIELD)
    seen: Viewer = await run_in_threadpool(own, request)
    form_checked(request, seen, form)
    try:
        return await _start(request, seen, form)
    except IrisUsageError as exc:
        return back(request, seen, f"/u/{seen.user_id}/skills", str(exc))


async def _start(request: Request, seen: Viewer, form: FormData) -> Response:
    rt = runtime(request)
    upload = form.get("archive")
    url = str(form.get("url") or "").strip()
    has_file = isinstance(upload, UploadFile) and bool(upload.filename)
    if has_file == bool(url):
        raise IrisUsageError("choose a .zip file or give a git URL (one of them)")
    repo = None
    if url:
        repo = await check_repo_url(url, FetchPolicy.from_settings(rt.settings))
        source = repo.url
    else:
        assert isinstance(upload, UploadFile)
        name = upload.filename or "upload.zip"
        if not name.lower().endswith(".zip"):
            raise IrisUsageError(f"{name} is not a .zip file")
        source = f"upload:{name[:100]}"
    job = _jobs(request).start(seen.user_id, source)
    try:
        archive = await blocking("skills", seen.user_id, _save_upload, upload, job,
                                 what="saving the upload") \
            if isinstance(upload, UploadFile) and not url else None
    except BaseException:
        job.done, job.error, job.stage = True, "the upload could not be saved", "Failed"
        shutil.rmtree(job.workdir, ignore_errors=True)
        raise
    task = asyncio.get_running_loop().create_task(
        _run(_library(request), job, archive=archive, repo=repo))
    request.app.state.import_tasks.add(task)
    task.add_done_callback(request.app.state.import_tasks.discard)
    return back(request, seen, f"/u/{seen.user_id}/skills/imports/{job.id}")


async def _run(library: SkillLibrary, job: ImportJob, *, archive: Path | None,
               repo: CheckedRepo | None) -> None:
    """The import in the skills lane (its own threads, one import per user, a deadline)."""
    try:
        await blocking("skills", job.user_id, run_import, library, job, archive=archive,
                       repo=repo, what="the import")
    except TookTooLong as exc:
        job.error, job.stage, job.done = str(exc), "Failed", True


def import_page(request: Request, form: FormData | None) -> Response:
    seen = own(request)
    job = _jobs(request).get(seen.user_id, request.path_params["job"])
    # Done first: a job's report is set before it is marked done, so a page that says "done"
    # always has the report (read the other way round, a job that ended in between showed
    # "Done" with no report and stopped reloading).
    done = job.done
    return render(request, "skill_import.html", viewer=seen, job=job, done=done,
                  report=job.report if done else None)


def review_page(request: Request, form: FormData | None) -> Response:
    seen = own(request)
    library = _library(request)
    item = quarantine.get(library, seen.user_id, request.path_params["name"])
    files = quarantine.files_of(library, item)
    findings = [(f, quarantine.line_text(files.get(f.path, b""), f.line, SHOWN_LINE)
                 or f.excerpt) for f in quarantine.findings_of(item)]
    return render(request, "skill_review.html", viewer=seen, notice=notice(request, seen),
                  item=item, findings=findings, files=sorted(item.files))


def decide(request: Request, form: FormData | None) -> Response:
    seen = own(request)
    form_checked(request, seen, form)
    assert form is not None
    name = request.path_params["name"]
    library = _library(request)
    decision = form.get("decision")
    if decision == "approve":
        written = quarantine.approve(library, seen.user_id, name,
                                     by=f"dashboard:{seen.display}")
        return back(request, seen, f"/u/{seen.user_id}/skills/{name}",
                    f"Approved {name}: it is one of your skills now (version "
                    f"{written.version or written.entry.version}).")
    if decision == "reject":
        quarantine.reject(library, seen.user_id, name)
        return back(request, seen, f"/u/{seen.user_id}/skills",
                    f"Rejected {name}: the quarantined import and its files are gone.")
    raise HTTPException(400, "approve or reject?")


def routes() -> list[Route]:
    return [
        Route("/u/{user}/skills/import", start_import, methods=["POST"]),
        Route("/u/{user}/skills/imports/{job}", page(import_page), methods=["GET"]),
        Route("/u/{user}/skills/quarantine/{name}", page(review_page), methods=["GET"]),
        Route("/u/{user}/skills/quarantine/{name}/decide", page(decide), methods=["POST"]),
    ]
