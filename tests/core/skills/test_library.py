"""The versioned library: every change a new version, rollback, bundled copies, tenancy, races,
and the same behaviour on S3 (moto over HTTP)."""

from __future__ import annotations

import threading

import pytest

from core.errors import IrisUsageError, NotFound
from core.skills.library import SkillLibrary
from core.skills.manage import SkillEditor, SkillRefused
from core.store import open_store
from tests.core.skills.conftest import PG


def test_every_change_is_a_version_and_rollback_restores_content(library, editor, alice):
    editor.create("pg-backup", PG)
    editor.patch("pg-backup", "pg_dump -Fc", "pg_dump --format=custom")
    editor.write_file("pg-backup", "scripts/backup.sh", "#!/bin/sh\npg_dump -Fc \"$1\"\n")
    versions = library.versions(alice, "pg-backup")
    assert [(v.version, v.action, v.provenance) for v in versions] == [
        (1, "create", "agent"), (2, "patch", "agent"), (3, "write_file", "agent")]
    assert library.snapshot(alice, "pg-backup").paths == ["SKILL.md", "scripts/backup.sh"]

    written = library.rollback(alice, "pg-backup", 1)
    assert written.version == 4
    now = library.snapshot(alice, "pg-backup")
    assert now.text() == PG and now.paths == ["SKILL.md"]
    assert library.snapshot(alice, "pg-backup", 3).text().count("--format=custom") == 1
    last = library.versions(alice, "pg-backup")[-1]
    assert (last.action, last.provenance, last.note) == ("rollback", "user", "restored version 1")


def test_rollback_without_a_version_goes_one_back(library, editor, alice):
    editor.create("pg-backup", PG)
    editor.patch("pg-backup", "mydb.dump`\n2.", "mydb.dump` (compressed)\n2.")
    library.rollback(alice, "pg-backup")
    assert library.snapshot(alice, "pg-backup").text() == PG


def test_rollback_errors_are_clear(library, editor, alice):
    with pytest.raises(NotFound, match="bundled skills have no versions"):
        library.rollback(alice, "git-workflow")
    editor.create("pg-backup", PG)
    with pytest.raises(IrisUsageError, match="only one version"):
        library.rollback(alice, "pg-backup")
    with pytest.raises(NotFound, match=r"no version 7 \(versions: 1\)"):
        library.rollback(alice, "pg-backup", 7)


def test_delete_archives_and_rollback_restores(library, editor, alice):
    editor.create("pg-backup", PG)
    editor.delete("pg-backup")
    assert library.find(alice, "pg-backup") is None
    assert "pg-backup" not in [e.name for e in library.entries(alice)]
    archived = [e for e in library.entries(alice, include_archived=True) if e.name == "pg-backup"]
    assert archived[0].status == "archived"
    with pytest.raises(NotFound, match="archived"):
        editor.patch("pg-backup", "pg_dump", "pg_dumpall")
    library.rollback(alice, "pg-backup")
    assert library.find(alice, "pg-backup").status == "active"
    assert library.snapshot(alice, "pg-backup").text() == PG


def test_bundled_skills_are_never_changed_the_agent_gets_a_copy(library, editor, alice, bob):
    original = library.snapshot(alice, "git-workflow").text()
    outcome = editor.patch("git-workflow", "# Git workflow", "# Git workflow (Alice's way)")
    assert "own copy" in outcome.message
    mine = library.find(alice, "git-workflow")
    assert (mine.version, mine.origin, mine.bundled) == (1, "bundled", False)
    assert "(Alice's way)" in library.snapshot(alice, "git-workflow").text()
    assert library.snapshot(bob, "git-workflow").text() == original
    assert (library.bundled()["git-workflow"].path / "SKILL.md").read_text() == original
    with pytest.raises(SkillRefused, match="bundled"):
        SkillEditor(library, bob).delete("git-workflow")
    editor.delete("git-workflow")  # deleting the copy brings the bundled skill back
    assert library.find(alice, "git-workflow").bundled


def test_one_users_skills_are_invisible_to_another(library, editor, alice, bob):
    editor.create("pg-backup", PG)
    assert library.find(bob, "pg-backup") is None
    assert "pg-backup" not in [e.name for e in library.entries(bob)]
    with pytest.raises(NotFound):
        library.snapshot(bob, "pg-backup")
    with pytest.raises(NotFound):
        library.rollback(bob, "pg-backup")
    SkillEditor(library, bob).create("pg-backup", PG.replace("Postgres data", "own data"))
    assert "Postgres data" in library.snapshot(alice, "pg-backup").text()
    keys = library.store.objects.list(alice, "skills/")
    assert keys and all(k.startswith("skills/pg-backup/") for k in keys)


def test_concurrent_patches_from_separate_workers_all_land(settings, alice):
    """Eight stores (as eight workers would have) patch different lines at once: every change
    survives, each as its own version."""
    first = open_store(settings)
    SkillEditor(SkillLibrary(first, settings), alice).create(
        "pg-backup", PG + "\n".join(f"- note {i}" for i in range(8)) + "\n"
    )
    errors: list[Exception] = []

    def patch(i: int) -> None:
        store = open_store(settings)
        try:
            SkillEditor(SkillLibrary(store, settings), alice).patch(
                "pg-backup", f"- note {i}\n", f"- note {i} (checked)\n")
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            store.close()

    threads = [threading.Thread(target=patch, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    text = SkillLibrary(first, settings).snapshot(alice, "pg-backup").text()
    assert all(f"- note {i} (checked)" in text for i in range(8))
    versions = SkillLibrary(first, settings).versions(alice, "pg-backup")
    assert len(versions) == 9
    first.close()


def test_unchanged_writes_make_no_version(library, editor, alice):
    editor.create("pg-backup", PG)
    outcome = editor.edit("pg-backup", PG)
    assert outcome.written.version is None and "unchanged" in outcome.message
    assert len(library.versions(alice, "pg-backup")) == 1


def test_library_on_s3(s3_bucket, moto_s3, monkeypatch, alice_on_s3):
    library, user = alice_on_s3
    editor = SkillEditor(library, user)
    editor.create("pg-backup", PG)
    editor.write_file("pg-backup", "references/flags.md", "# Flags\n-Fc custom format\n")
    editor.patch("pg-backup", "pg_dump -Fc", "pg_dump --format=custom")
    library.rollback(user, "pg-backup", 1)
    assert library.snapshot(user, "pg-backup").text() == PG
    keys = moto_s3.client().list_objects_v2(Bucket=s3_bucket)["Contents"]
    assert all(k["Key"].startswith(f"iris/users/{user}/skills/pg-backup/") for k in keys)
    assert sum("/versions/" in k["Key"] for k in keys) == 4


@pytest.fixture
def alice_on_s3(s3_bucket, moto_s3, monkeypatch):
    from core.config import load_settings

    monkeypatch.setenv("IRIS_OBJECTS_URL", f"s3://{s3_bucket}/iris")
    monkeypatch.setenv("IRIS_S3_ENDPOINT_URL", moto_s3.endpoint_url)
    monkeypatch.setenv("IRIS_S3_REGION", moto_s3.region)
    settings = load_settings()
    store = open_store(settings)
    yield SkillLibrary(store, settings), store.users.for_account("http:alice")
    store.close()
