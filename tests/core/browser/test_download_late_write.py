"""core.browser.downloads without Chromium: the events in the order Chromium may send them
when it writes a download's file after Iris removed it (under-load run 3 of stop 40 found such a
file left in downloads/.incoming): refused at the count cap, over the size cap, or cancelled by
the page; each is removed again on its next event and at the action's end."""

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


def test_an_over_cap_downloads_late_file_is_removed_again(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "downloads").mkdir()
    cancelled: list[str] = []
    downloads = Downloads("downloads", 100, 5, cancelled.append, [])
    incoming = tmp_path / "downloads" / ".incoming"
    downloads.on_begin({"guid": "g3", "suggestedFilename": "big.bin"})
    downloads.on_progress({"guid": "g3", "state": "inProgress", "receivedBytes": 500,
                           "totalBytes": 500})
    assert cancelled == ["g3"] and any("100-byte cap" in r for r in downloads.refused)
    (incoming / "g3").write_bytes(b"x" * 500)  # the rest arrives after the cancel
    downloads.on_progress({"guid": "g3", "state": "completed", "receivedBytes": 500,
                           "totalBytes": 500})
    assert list(incoming.iterdir()) == [] and downloads.kept == []
    (incoming / "g3").write_bytes(b"x" * 500)  # and once more, with no event after it
    downloads.stop_unfinished()
    assert list(incoming.iterdir()) == []


def test_a_cancelled_downloads_late_file_is_removed_when_the_action_ends(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "downloads").mkdir()
    downloads = Downloads("downloads", 1000, 5, [].append, [])
    incoming = tmp_path / "downloads" / ".incoming"
    downloads.on_begin({"guid": "g4", "suggestedFilename": "d.txt"})
    downloads.on_progress({"guid": "g4", "state": "canceled", "receivedBytes": 0,
                           "totalBytes": 10})  # the page cancelled it
    (incoming / "g4").write_bytes(b"late")
    downloads.stop_unfinished()
    assert list(incoming.iterdir()) == [] and downloads.kept == []
