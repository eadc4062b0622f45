"""Memory: both stores with their fill level, edit, remove (to the archive), the archive with
search and restore, and writes waiting for the user's confirmation."""

from __future__ import annotations

import anyio.from_thread
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from core.dashboard.memory import change
from core.errors import IrisUsageError
from core.memory.book import Limits, MemoryBook
from core.memory.models import LABELS
from core.memory.models import summary as write_summary
from functions.dashboard.guard import back, form_checked, notice, own, runtime
from functions.dashboard.web import page, render


def memory_page(request: Request, form: FormData | None) -> Response:
    seen = own(request)
    store, settings = runtime(request).store, runtime(request).settings
    usage = MemoryBook(store).usage(seen.user_id, Limits.from_settings(settings))
    snapshot, versions = store.memory.snapshot(seen.user_id), store.memory.versions(seen.user_id)
    query = request.query_params.get("q", "").strip()[:200]
    archive = (store.memory.search_archive(seen.user_id, query, limit=30) if query
               else store.memory.list_archive(seen.user_id, limit=30))
    stores = [{"target": t, "label": LABELS[t], "usage": usage[t], "entries": snapshot[t],
               "version": versions[t]} for t in ("user", "memory")]
    return render(request, "memory.html", viewer=seen, notice=notice(request, seen),
                  stores=stores, archive=archive, query=query,
                  held=store.held_writes.pending(seen.user_id, "memory"))


def memory_change(request: Request, form: FormData | None) -> Response:
    seen = own(request)
    form_checked(request, seen, form)
    assert form is not None
    rt = runtime(request)
    version = str(form.get("version") or "")
    try:
        result = change(
            rt.store, rt.settings, seen.user_id, action=str(form.get("action") or ""),
            target=str(form.get("target") or ""), entry_id=str(form.get("entry") or "") or None,
            text=str(form.get("text") or ""), version=int(version) if version.isdigit() else None,
            who="dashboard",
        )
    except IrisUsageError as exc:
        return back(request, seen, f"/u/{seen.user_id}/memory", f"Not saved: {exc}")
    return back(request, seen, f"/u/{seen.user_id}/memory", f"Saved. {write_summary(result)}")


def memory_restore(request: Request, form: FormData | None) -> Response:
    seen = own(request)
    form_checked(request, seen, form)
    assert form is not None
    rt = runtime(request)
    archive_id = str(form.get("archive") or "")
    try:
        result = MemoryBook(rt.store).restore(seen.user_id, archive_id,
                                               limits=Limits.from_settings(rt.settings),
                                               who="dashboard")
    except IrisUsageError as exc:
        return back(request, seen, f"/u/{seen.user_id}/memory", f"Not restored: {exc}")
    return back(request, seen, f"/u/{seen.user_id}/memory",
                f"Restored. {write_summary(result)}")


def held_decide(request: Request, form: FormData | None) -> Response:
    """Approve or reject a held memory or skill write (core.asking.confirm's rules)."""
    from core.asking import confirm
    seen = own(request)
    form_checked(request, seen, form)
    assert form is not None
    rt = runtime(request)
    kind = "skill" if form.get("kind") == "skill" else "memory"
    number = str(form.get("number") or "")
    if not number.isdigit():
        raise IrisUsageError("which held write? (a number)")
    who = f"dashboard:{seen.session.id}"
    if form.get("decision") == "approve":
        message = anyio.from_thread.run(
            lambda: confirm.approve(rt.store, rt.settings, seen.user_id, kind, int(number), by=who))
    else:
        message = confirm.reject(rt.store, seen.user_id, kind, int(number), by=who)
    where = "memory" if kind == "memory" else "skills"
    return back(request, seen, f"/u/{seen.user_id}/{where}", message)


def routes() -> list[Route]:
    return [
        Route("/u/{user}/memory", page(memory_page), methods=["GET"]),
        Route("/u/{user}/memory/change", page(memory_change), methods=["POST"]),
        Route("/u/{user}/memory/restore", page(memory_restore), methods=["POST"]),
        Route("/u/{user}/held", page(held_decide), methods=["POST"]),
    ]
