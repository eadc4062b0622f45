"""Curation: unused skills go stale after 30 days and are archived after 90; nothing deleted."""

from __future__ import annotations

from core.skills.curate import DAY, curate
from tests.core.skills.conftest import PG, skill_md


def test_unused_skills_go_stale_then_archived_and_come_back(library, editor, alice, bob):
    editor.create("pg-backup", PG)
    editor.create("nginx-reload", skill_md("nginx-reload", "Reloads nginx safely. Use when a "
                                           "site config changed."))
    start = library.store.clock.now()
    assert curate(library, [alice], at=start + 29 * DAY) == []

    library.record(alice, ["nginx-reload"], "used", at=start + 20 * DAY)
    changes = curate(library, [alice, bob], at=start + 31 * DAY, dry_run=True)
    assert [(c.name, c.before, c.after) for c in changes] == [("pg-backup", "active", "stale")]
    assert library.find(alice, "pg-backup").status == "active"

    curate(library, [alice, bob], at=start + 31 * DAY)
    assert library.find(alice, "pg-backup").status == "stale"
    assert curate(library, [alice], at=start + 32 * DAY) == []

    library.record(alice, ["pg-backup"], "used", at=start + 33 * DAY)
    assert library.find(alice, "pg-backup").status == "active"

    changes = curate(library, [alice], at=start + 200 * DAY)
    assert {(c.name, c.after) for c in changes} == {("pg-backup", "archived"),
                                                    ("nginx-reload", "archived")}
    assert library.find(alice, "pg-backup") is None
    assert len(library.entries(alice)) == 5  # the bundled skills are never curated
    assert library.snapshot(alice, "pg-backup", 1).text() == PG  # kept, restorable
    library.rollback(alice, "pg-backup")
    assert library.find(alice, "pg-backup").status == "active"
    assert library.catalog.users_with_skills() == [alice]
