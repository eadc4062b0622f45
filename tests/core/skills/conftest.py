from __future__ import annotations

import pytest

from core.skills.library import SkillLibrary
from core.skills.manage import SkillEditor


def skill_md(name: str, description: str, body: str = "1. Do the thing.\n", **extra: str) -> str:
    fields = "".join(f"{key}: {value}\n" for key, value in extra.items())
    return f"---\nname: {name}\ndescription: {description}\n{fields}---\n\n# {name}\n\n{body}"


PG = skill_md(
    "pg-backup",
    "Backs up a PostgreSQL database with pg_dump and restores it with pg_restore. Use when "
    "the user asks for a database backup, a restore, or a dump of their Postgres data.",
    "1. `pg_dump -Fc mydb > mydb.dump`\n2. `pg_restore -d mydb mydb.dump`\n",
)


@pytest.fixture
def library(store, settings):
    return SkillLibrary(store, settings)


@pytest.fixture
def alice(store):
    return store.users.for_account("http:alice")


@pytest.fixture
def bob(store):
    return store.users.for_account("http:bob")


@pytest.fixture
def editor(library, alice):
    return SkillEditor(library, alice)
