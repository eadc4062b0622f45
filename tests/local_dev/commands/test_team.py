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
