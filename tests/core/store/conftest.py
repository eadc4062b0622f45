"""Storage tests run on both backends (tests/fakes/hrana_fixtures.py): ``open_db`` opens a
database at the test's ``db_url`` with the token that backend needs."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest

from core.store.db import Database


@pytest.fixture
def open_db(db_url: str) -> Iterator[Callable[..., Database]]:
    opened: list[Database] = []

    def opener(**options) -> Database:
        db = Database(db_url, os.environ.get("IRIS_DB_AUTH_TOKEN"), **options)
        opened.append(db)
        return db

    yield opener
    for db in opened:
        db.close()
