"""Numbered schema migrations, applied in order when the store opens.

Each migration is a module ``core/store/schema/mNNN_description.py`` with a function
``migrate(db)``. Applied ones are recorded in ``_migrations`` by module name; a migration runs
inside one transaction together with its record, so two processes opening the same database at
once apply each migration exactly once. Every table that holds user data has a ``user_id``
column: the owning user (or group scope).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable
from typing import cast

from core.store import schema
from core.store.db import Database

NAME_RE = re.compile(r"^m(\d{3})_[a-z0-9_]+$")


def discover() -> list[str]:
    """Migration module names in order."""
    names = sorted(m.name for m in pkgutil.iter_modules(schema.__path__) if NAME_RE.match(m.name))
    numbers = [name[:4] for name in names]
    if len(set(numbers)) != len(numbers):
        raise RuntimeError(f"two schema migrations share a number: {names}")
    return names


def load(name: str) -> Callable[[Database], None]:
    module = importlib.import_module(f"{schema.__name__}.{name}")
    return cast("Callable[[Database], None]", module.migrate)


def applied_count(db: Database) -> int:
    return int(db.scalar("SELECT count(*) FROM _migrations"))


def migrate(db: Database) -> list[str]:
    """Apply every migration not yet recorded; returns the names applied now."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)"
    )
    done = {row["name"] for row in db.query("SELECT name FROM _migrations")}
    applied: list[str] = []
    for name in discover():
        if name in done:
            continue
        apply = load(name)
        with db.transaction():
            if db.one("SELECT 1 AS x FROM _migrations WHERE name = ?", (name,)):
                continue
            apply(db)
            db.execute(
                "INSERT INTO _migrations (name, applied_at) VALUES (?, ?)", (name, db.clock.now())
            )
        applied.append(name)
    return applied
