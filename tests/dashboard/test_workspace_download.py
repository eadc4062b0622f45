"""The workspace page's download refuses, at once, anything but a regular file: a named pipe
(which would block a reader forever) and a link (which could lead outside the workspace)."""

from __future__ import annotations

import contextlib
import os

from tests.dashboard.test_http import signed_in


def test_a_pipe_or_a_link_is_refused_at_once_and_files_still_download(dash, web, tmp_path):
    user_id, _ = signed_in(dash, web)
    root = dash.runtime.settings.home / "workspaces" / user_id
    root.mkdir(parents=True, exist_ok=True)
    host = tmp_path / "host-secret.txt"
    host.write_text("HOST SECRET")
    (root / "link.txt").symlink_to(host)
    (root / "folder").mkdir()
    (root / "plain.txt").write_text("plain")
    os.mkfifo(root / "pipe")
    try:
        for _ in range(8):  # more than the default thread pool: none may be left stuck
            refused = web.get(f"/ui/u/{user_id}/workspace/file", params={"path": "pipe"})
            assert refused.status_code == 400 and "named pipe" in refused.text
        link = web.get(f"/ui/u/{user_id}/workspace/file", params={"path": "link.txt"})
        assert link.status_code == 400 and "symbolic link" in link.text
        assert b"HOST SECRET" not in link.content
        folder = web.get(f"/ui/u/{user_id}/workspace/file", params={"path": "folder"})
        assert folder.status_code == 400 and "directory" in folder.text
        page = web.get(f"/ui/u/{user_id}/workspace")
        assert page.status_code == 200 and "pipe" in page.text
        got = web.get(f"/ui/u/{user_id}/workspace/file", params={"path": "plain.txt"})
        assert got.status_code == 200 and got.content == b"plain"
    finally:  # on code that blocks opening the pipe, let the stuck threads go
        with contextlib.suppress(OSError):
            os.close(os.open(root / "pipe", os.O_WRONLY | os.O_NONBLOCK))
