"""core.browser.downloads without Chromium: the events in the order Chromium may send them
when it writes a refused download's file after Iris removed it (under-load run 3 of stop 40
found such a file left in downloads/.incoming)."""

from __future__ import annotations

from core.browser.downloads import Downloads


def _downloads(tmp_path, cancelled, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the driver runs in the user's workspace
    folder = tmp_path / "downloads"
    folder.mkdir()
    (folder / "a.txt").write_bytes(b"x" * 10)  # already holds one: the cap
    return Downloads("downloads", 1000, 1, cancelled.append, []), folder / ".incoming"


def test_a_refused_downloads_late_file_is_removed_on_its_next_event(tmp_path, monkeypatch):
    cancelled: list[str] = []
    downloads, incoming = _downloads(tmp_path, cancelled, monkeypatch)
    downloads.on_begin({"guid": "g1", "suggestedFilename": "b.txt"})
    assert cancelled == ["g1"] and any("already holds 1" in r for r in downloads.refused)
    (incoming / "g1").write_bytes(b"late")  # Chromium finishes writing after the cancel
    downloads.on_progress({"guid": "g1", "state": "completed", "receivedBytes": 4,
                           "totalBytes": 4})
    assert list(incoming.iterdir()) == []
    assert downloads.kept == []


def test_a_refused_downloads_late_file_is_removed_when_the_action_ends(tmp_path, monkeypatch):
    downloads, incoming = _downloads(tmp_path, [], monkeypatch)
    downloads.on_begin({"guid": "g2", "suggestedFilename": "c.txt"})
    (incoming / "g2").write_bytes(b"late")  # written, and no further event came
    downloads.stop_unfinished()
    assert list(incoming.iterdir()) == []
