"""``iris team`` through the real CLI group against the test's store (both backends)."""

from __future__ import annotations

from click.testing import CliRunner

from local_dev.cli import cli


def iris(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_team_lifecycle_through_the_cli(settings):
    made = iris("team", "create", "eng", "--as", "telegram:42")
    assert made.exit_code == 0, made.output
    assert "Team eng created" in made.output
    added = iris("team", "add", "eng", "slack:T1/U9", "--role", "admin", "--as", "telegram:42")
    assert added.exit_code == 0, added.output
    invited = iris("team", "add", "eng", "Ada@Example.com", "--as", "slack:T1/U9")
    assert invited.exit_code == 0, invited.output
    listed = iris("team", "list", "--as", "email:ada@example.com")
    assert "eng — you: member" in listed.output
    assert "telegram:42 (owner)" in listed.output and "slack:T1/U9 (admin)" in listed.output

    refused = iris("team", "add", "eng", "telegram:7", "--as", "email:ada@example.com")
    assert refused.exit_code != 0
    assert "needs a team admin" in refused.output
    stranger = iris("team", "list", "--as", "telegram:7")
    assert "You are in no team" in stranger.output
    nosy = iris("team", "role", "eng", "telegram:42", "member", "--as", "telegram:7")
    assert nosy.exit_code != 0 and "belongs to" in nosy.output

    demoted = iris("team", "role", "eng", "slack:T1/U9", "member", "--as", "telegram:42")
    assert demoted.exit_code == 0, demoted.output
    left = iris("team", "remove", "eng", "ada@example.com", "--as", "email:ada@example.com")
    assert left.exit_code == 0 and "You left eng" in left.output
    gone = iris("team", "list", "--as", "email:ada@example.com")
    assert "You are in no team" in gone.output


def test_team_skills_review_approve_and_rollback_through_the_cli(settings, store):
    from core.skills.library import SkillLibrary
    from core.skills.manage import SkillEditor
    from core.teams.skills import share

    assert iris("team", "create", "eng", "--as", "telegram:42").exit_code == 0
    assert iris("team", "add", "eng", "telegram:7", "--as", "telegram:42").exit_code == 0
    library = SkillLibrary(store, settings)
    ada = store.users.resolve("telegram:7")
    text = "---\nname: pg-backup\ndescription: Backs up Postgres.\n---\n\n1. Run pg_dump.\n"
    SkillEditor(library, ada, provenance="user").create("pg-backup", text)
    share(library, ada, "eng", "pg-backup")
    SkillEditor(library, ada, provenance="user").patch("pg-backup", "pg_dump.", "pg_dump -Fc.")
    share(library, ada, "eng", "pg-backup")

    member = iris("team", "skills", "eng", "--as", "telegram:7")  # what is offered, no more
    assert member.exit_code == 0 and "offers: none yet" in member.output
    assert "pg-backup" not in member.output
    listed = iris("team", "skills", "eng", "--as", "telegram:42")
    assert listed.exit_code == 0, listed.output
    assert "pg-backup v1 by telegram:7 (proposed)" in listed.output
    assert "pg-backup v2 by telegram:7 (proposed)" in listed.output
    for version in ("1", "2"):
        done = iris("team", "approve", "eng", "pg-backup", version, "--as", "telegram:42")
        assert done.exit_code == 0 and f"pg-backup v{version} is now offered" in done.output
    assert [o.version for o in store.team_skills.offered(ada)] == [2]
    back = iris("team", "rollback", "eng", "pg-backup", "--as", "telegram:42")
    assert back.exit_code == 0 and "offers pg-backup v1 again" in back.output
    assert [o.version for o in store.team_skills.offered(ada)] == [1]
    store.users.for_account("telegram:99")
    nosy = iris("team", "rollback", "eng", "pg-backup", "2", "--as", "telegram:99")
    assert nosy.exit_code != 0 and "belongs to" in nosy.output
