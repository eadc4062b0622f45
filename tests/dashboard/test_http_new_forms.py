"""The dashboard's newer forms (skill import, quarantine decisions, held commands) refuse a
request without the session's CSRF token or from another site, and change nothing; a user's
session cannot decide held commands (403)."""

from __future__ import annotations

import io
import socket
import zipfile

import httpx

from core.dashboard.signin import issue_link
from core.skills import quarantine
from core.skills.library import SkillLibrary
from iris_testing.waiting import wait_until
from tests.dashboard.test_browser_skill_import import RISKY
from tests.dashboard.test_http import signed_in


def zipped(files):
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as handle:
        for name, text in files.items():
            handle.writestr(name, text)
    return data.getvalue()


def refused(web, dash, where, csrf, **kwargs):
    """403 without the token, with a wrong one, and from another site."""
    data = kwargs.pop("data", {})
    site = {"origin": dash.url}
    assert web.post(where, data=data, headers=site, **kwargs).status_code == 403
    assert web.post(where, data={**data, "csrf": "wrong"}, headers=site,
                    **kwargs).status_code == 403
    assert web.post(where, data={**data, "csrf": csrf}, headers={"origin": "https://evil.example"},
                    **kwargs).status_code == 403


def test_skill_import_and_quarantine_forms_need_the_token_and_this_site(dash, web):
    user_id, csrf = signed_in(dash, web)
    library = SkillLibrary(dash.runtime.store, dash.runtime.settings)
    archive = zipped({"meeting-notes/SKILL.md": RISKY})
    where = f"/ui/u/{user_id}/skills/import"
    refused(web, dash, where, csrf, files={"archive": ("s.zip", archive, "application/zip")})
    assert quarantine.pending(library, user_id) == []

    started = web.post(where, data={"csrf": csrf}, headers={"origin": dash.url},
                       files={"archive": ("s.zip", archive, "application/zip")})
    assert started.status_code == 303 and "/skills/imports/imp_" in started.headers["location"]
    def finished():
        page = web.get(started.headers["location"])
        return None if 'data-done="no"' in page.text else page

    job = wait_until(finished, "the import job to finish")
    shown = job.text.split('<section class="card"', 1)[-1]  # the job's stage, error and items
    assert 'data-status="quarantined"' in job.text, shown
    assert [q.name for q in quarantine.pending(library, user_id)] == ["meeting-notes"]

    decide = f"/ui/u/{user_id}/skills/quarantine/meeting-notes/decide"
    refused(web, dash, decide, csrf, data={"decision": "approve"})
    assert [q.name for q in quarantine.pending(library, user_id)] == ["meeting-notes"]
    assert library.catalog.get(user_id, "meeting-notes") is None


def test_an_upload_that_is_too_large_or_not_a_zip_is_refused(dash, web):
    user_id, csrf = signed_in(dash, web)
    where = f"/ui/u/{user_id}/skills/import"
    not_zip = web.post(where, data={"csrf": csrf}, headers={"origin": dash.url},
                       files={"archive": ("notes.txt", b"hello", "text/plain")})
    assert not_zip.status_code == 303
    assert "not+a+.zip+file" in not_zip.headers["location"]
    # a declared 200 MiB body is refused before a byte of it is read
    url = httpx.URL(dash.url)
    with socket.create_connection((url.host, url.port), timeout=30) as raw:
        raw.sendall(f"POST {where} HTTP/1.1\r\nHost: {url.netloc.decode()}\r\n"
                    "Content-Type: multipart/form-data; boundary=x\r\n"
                    f"Content-Length: {200 * 2**20}\r\n\r\n".encode())
        assert raw.recv(64).startswith(b"HTTP/1.1 413 ")


def test_held_commands_are_decided_by_an_owner_only_with_the_token(dash, web):
    dash.ask("/help", "alice")
    alice = dash.user_id("alice")
    held = dash.runtime.store.held.hold(
        alice, chat_key="http:alice", session_id=None, command="rm -rf build", workdir=None,
        timeout=30, reason="it deletes files", ttl=3600, requested_by="http:alice")
    form = {"user": alice, "number": str(held.number), "decision": "deny"}
    _, user_csrf = signed_in(dash, web, "bob")
    assert web.post("/ui/owner/held/decide", data={**form, "csrf": user_csrf},
                    headers={"origin": dash.url}).status_code == 403
    web.cookies.clear()
    owner_id = dash.runtime.store.users.for_account("http:carol")
    link = issue_link(dash.runtime.store, owner_id, is_owner=True, issued_by="test",
                      base_url=dash.url)
    assert web.post("/ui/signin", data={"t": link.token},
                    headers={"origin": dash.url}).status_code == 303
    page = web.get("/ui/owner/held")
    csrf = page.text.split('name="csrf" value="')[1].split('"')[0]
    refused(web, dash, "/ui/owner/held/decide", csrf, data=form)
    assert dash.runtime.store.held.get(alice, held.number).status == "pending"
    done = web.post("/ui/owner/held/decide", data={**form, "csrf": csrf},
                    headers={"origin": dash.url})
    assert done.status_code == 303
    assert dash.runtime.store.held.get(alice, held.number).status == "denied"
