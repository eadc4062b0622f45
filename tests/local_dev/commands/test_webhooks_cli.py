"""``iris webhooks`` through the real CLI group against the test's store."""

from __future__ import annotations

import re

from click.testing import CliRunner

from local_dev.cli import cli


def iris(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_create_list_rotate_and_delete_through_the_cli(settings):
    made = iris("webhooks", "create", "ci", "--user", "telegram:42", "--prompt",
                "Summarise this event")
    assert made.exit_code == 0, made.output
    hook_id = re.search(r"/hooks/(hook_\w+)", made.output)[1]
    secret = re.search(r"secret:\s+(\S+)", made.output)[1]
    assert len(secret) >= 32

    listed = iris("webhooks", "list", "--user", "telegram:42")
    assert hook_id in listed.output and "ci" in listed.output
    assert secret not in listed.output  # the secret is shown once, at creation
    assert hook_id not in iris("webhooks", "list", "--user", "telegram:7").output

    other = iris("webhooks", "delete", hook_id, "--user", "telegram:7")
    assert other.exit_code != 0  # another user's endpoint is not found for them

    rotated = iris("webhooks", "rotate-secret", hook_id, "--user", "telegram:42")
    assert rotated.exit_code == 0, rotated.output
    assert re.search(r"secret:\s+(\S+)", rotated.output)[1] != secret

    deleted = iris("webhooks", "delete", hook_id, "--user", "telegram:42")
    assert deleted.exit_code == 0 and f"deleted {hook_id}" in deleted.output
    assert hook_id not in iris("webhooks", "list", "--user", "telegram:42").output
