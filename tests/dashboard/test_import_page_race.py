"""The import page never says "Done" without the import's report: a job that ends while the
page is being built (between reading its state and drawing it) shows as still running, and the
page keeps reloading until its next read finds both. CI saw the other order once: "Done", no
items, and no more reloads."""

from __future__ import annotations

from core.dashboard.imports import ImportJob, ImportJobs
from core.skills.importer import ImportItem, ImportReport
from tests.dashboard.test_http import signed_in


class EndsWhileRead(ImportJob):
    """A job whose import thread finishes the moment the page first looks at its report or
    at whether it is done (a thread's writes landing between the page's two reads)."""

    def __getattribute__(self, name: str) -> object:
        if name in ("report", "done") and not object.__getattribute__(self, "_ended"):
            object.__setattr__(self, "_ended", True)
            object.__setattr__(self, "_report", ImportReport(source="upload:s.zip", items=[
                ImportItem(path="notes", name="notes", status="quarantined")]))
            value = object.__getattribute__(self, "_report" if name == "report" else "_done")
            object.__setattr__(self, "_done", True)
            return value
        if name == "report":
            return object.__getattribute__(self, "_report")
        if name == "done":
            return object.__getattribute__(self, "_done")
        return object.__getattribute__(self, name)


def test_a_job_ending_while_its_page_is_drawn_is_shown_running_then_done(dash, web, monkeypatch):
    user_id, _ = signed_in(dash, web)
    job = EndsWhileRead(id="imp_race", user_id=user_id, source="upload:s.zip")
    object.__setattr__(job, "_ended", False)
    object.__setattr__(job, "_report", None)
    object.__setattr__(job, "_done", False)
    monkeypatch.setattr(ImportJobs, "get", lambda self, user, job_id: job)
    where = f"/ui/u/{user_id}/skills/imports/imp_race"
    first = web.get(where).text
    second = web.get(where).text
    for page in (first, second):
        done = 'data-done="yes"' in page
        assert done == ('data-status="quarantined"' in page), page
        assert done != ('http-equiv="refresh"' in page), page  # reloads until it is done
    assert 'data-done="no"' in first and 'data-done="yes"' in second
