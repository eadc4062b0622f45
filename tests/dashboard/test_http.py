"""The dashboard's guard over real HTTP (uvicorn on loopback): forms need the session's CSRF
token and this site's origin, cookies are HttpOnly and SameSite=Strict, pages carry a strict
Content-Security-Policy, and /ui loads nothing on the webhook ack path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from core.dashboard.signin import issue_link

ROOT = Path(__file__).resolve().parents[2]


def signed_in(dash, web, user: str = "alice") -> tuple[str, str]:
    """Sign ``user`` in with plain HTTP; (user id, csrf token)."""
    user_id = dash.runtime.store.users.for_account(f"http:{user}")
    link = issue_link(dash.runtime.store, user_id, is_owner=False, issued_by="test",
                      base_url=dash.url)
    landing = web.get(link.url)
    assert landing.status_code == 200 and "Sign in" in landing.text
    opened = web.post("/ui/signin", data={"t": link.token}, headers={"origin": dash.url})
    assert opened.status_code == 303
    cookie = opened.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/ui" in cookie
    assert "Secure" not in cookie  # plain HTTP on loopback
    page = web.get(f"/ui/u/{user_id}/memory")
    assert page.status_code == 200
    csrf = page.text.split('name="csrf" value="')[1].split('"')[0]
    return user_id, csrf


def test_opening_a_link_spends_nothing_until_the_button_is_pressed(dash, web):
    user_id = dash.runtime.store.users.for_account("http:alice")
    link = issue_link(dash.runtime.store, user_id, is_owner=False, issued_by="t", base_url=None)
    for _ in range(3):  # a chat app's link preview fetches the address
        assert web.get(f"/ui/signin?t={link.token}").status_code == 200
    refused = web.post("/ui/signin", data={"t": link.token},
                       headers={"origin": "https://evil.example"})
    assert refused.status_code == 403
    assert web.post("/ui/signin", data={"t": link.token},
                    headers={"origin": dash.url}).status_code == 303


def test_a_form_without_the_csrf_token_or_from_another_site_changes_nothing(dash, web):
    user_id, csrf = signed_in(dash, web)
    add = {"action": "add", "target": "user", "text": "Alice likes tea."}
    where = f"/ui/u/{user_id}/memory/change"
    assert web.post(where, data=add, headers={"origin": dash.url}).status_code == 403
    assert web.post(where, data={**add, "csrf": "wrong"},
                    headers={"origin": dash.url}).status_code == 403
    assert web.post(where, data={**add, "csrf": csrf},
                    headers={"origin": "https://evil.example"}).status_code == 403
    assert web.post(where, data={**add, "csrf": csrf},
                    headers={"origin": dash.url, "sec-fetch-site": "cross-site"}).status_code == 403
    assert dash.runtime.store.memory.entries(user_id) == []
    done = web.post(where, data={**add, "csrf": csrf}, headers={"origin": dash.url})
    assert done.status_code == 303
    assert [e.content for e in dash.runtime.store.memory.entries(user_id)] == ["Alice likes tea."]
    assert [e.provenance for e in dash.runtime.store.memory.entries(user_id)] == ["user"]


def test_a_stale_page_does_not_overwrite_a_newer_memory(dash, web):
    user_id, csrf = signed_in(dash, web)
    store = dash.runtime.store
    web.post(f"/ui/u/{user_id}/memory/change", headers={"origin": dash.url},
             data={"action": "add", "target": "user", "text": "Likes tea.", "csrf": csrf})
    entry = store.memory.entries(user_id, "user")[0]
    seen_version = store.memory.versions(user_id)["user"]
    web.post(f"/ui/u/{user_id}/memory/change", headers={"origin": dash.url},
             data={"action": "add", "target": "user", "text": "Lives in Lyon.", "csrf": csrf})
    stale = web.post(f"/ui/u/{user_id}/memory/change", headers={"origin": dash.url},
                     data={"action": "replace", "target": "user", "entry": entry.id,
                           "version": str(seen_version), "text": "Likes coffee.", "csrf": csrf},
                     follow_redirects=True)
    assert "Not saved: memory changed since you started editing" in stale.text
    assert [e.content for e in store.memory.entries(user_id, "user")] == [
        "Likes tea.", "Lives in Lyon."]


def test_pages_carry_a_strict_content_security_policy(dash, web):
    user_id, _ = signed_in(dash, web)
    page = web.get(f"/ui/u/{user_id}/chat")
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["cache-control"] == "no-store"
    assert web.get("/ui/static/ui.js").status_code == 200
    assert "<script>" not in page.text  # no inline script anywhere


def test_signed_out_requests_get_the_sign_in_page(dash, web):
    user_id = dash.runtime.store.users.for_account("http:alice")
    page = web.get(f"/ui/u/{user_id}/memory", cookies={"iris_ui": "forged"})
    assert page.status_code == 401 and "/dashboard" in page.text


def test_the_dashboard_loads_on_the_first_ui_request_only(tmp_path):
    code = f"""
import json, sys
from starlette.testclient import TestClient
from core.config import load_settings
from functions.app import create_app
from functions.runtime import compose
rt = compose(load_settings({{"IRIS_HOME": {str(tmp_path)!r}}}))
client = TestClient(create_app(rt))
before = [m for m in ("jinja2", "functions.dashboard.app") if m in sys.modules]
client.get("/healthz")
after_health = [m for m in ("jinja2", "functions.dashboard.app") if m in sys.modules]
status = client.get("/ui/signin").status_code
after_ui = [m for m in ("jinja2", "functions.dashboard.app") if m in sys.modules]
print(json.dumps([before, after_health, status, after_ui]))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         timeout=120, check=True)
    before, after_health, status, after_ui = json.loads(out.stdout.strip().splitlines()[-1])
    assert before == [] and after_health == []
    assert status == 200 and after_ui == ["jinja2", "functions.dashboard.app"]


def test_the_workspace_is_browsed_and_downloaded_read_only_inside_it(dash, web):
    user_id, _ = signed_in(dash, web)
    root = dash.runtime.settings.home / "workspaces" / user_id
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "plan <b>.md").write_text("# Plan\n<script>alert(1)</script>\n")
    (root.parent / "secret.txt").write_text("not yours")

    top = web.get(f"/ui/u/{user_id}/workspace")
    assert top.status_code == 200 and "notes/" in top.text
    folder = web.get(f"/ui/u/{user_id}/workspace", params={"path": "notes"})
    assert "plan &lt;b&gt;.md" in folder.text
    got = web.get(f"/ui/u/{user_id}/workspace/file", params={"path": "notes/plan <b>.md"})
    assert got.status_code == 200 and got.content.startswith(b"# Plan")
    assert got.headers["content-type"] == "application/octet-stream"
    assert got.headers["content-disposition"].startswith("attachment;")
    for bad in ("../secret.txt", "/etc/passwd", "notes/../../secret.txt"):
        refused = web.get(f"/ui/u/{user_id}/workspace/file", params={"path": bad})
        assert refused.status_code == 400, bad
        assert b"not yours" not in refused.content
    assert web.get(f"/ui/u/{user_id}/workspace/file",
                   params={"path": "notes/missing.md"}).status_code == 404
    other = dash.runtime.store.users.for_account("http:bob")
    assert web.get(f"/ui/u/{other}/workspace").status_code == 404


def test_the_cookie_is_secure_behind_https(dash, web):
    user_id = dash.runtime.store.users.for_account("http:alice")
    link = issue_link(dash.runtime.store, user_id, is_owner=False, issued_by="t", base_url=None)
    opened = web.post("/ui/signin", data={"t": link.token},
                      headers={"origin": dash.url, "x-forwarded-proto": "https"})
    assert opened.status_code == 303 and "Secure" in opened.headers["set-cookie"]
