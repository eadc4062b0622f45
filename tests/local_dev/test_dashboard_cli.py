"""``iris dashboard link|sessions|revoke`` against a real store in IRIS_HOME."""

from __future__ import annotations

import re

from click.testing import CliRunner

from core.config import load_settings
from core.dashboard.signin import redeem, session_for
from core.store import open_store
from local_dev.cli import cli


def test_link_sessions_and_revoke(monkeypatch):
    monkeypatch.setenv("USER", "ada")
    monkeypatch.setenv("IRIS_PUBLIC_URL", "https://iris.example.com")
    runner = CliRunner()
    owner_link = runner.invoke(cli, ["dashboard", "link"])
    assert owner_link.exit_code == 0, owner_link.output
    token = re.search(r"https://iris\.example\.com/ui/signin\?t=(\S+)", owner_link.output)[1]
    user_link = runner.invoke(cli, ["dashboard", "link", "--user", "ada"])
    user_token = re.search(r"\?t=(\S+)", user_link.output)[1]
    store = open_store(load_settings())
    try:
        owner = redeem(store, token)
        plain = redeem(store, user_token)
        assert owner.session.is_owner and not plain.session.is_owner  # http:ada is no owner
        assert owner.session.user_id == store.users.resolve("http:ada")
        listed = runner.invoke(cli, ["dashboard", "sessions"])
        assert owner.session.id in listed.output and " owner " in listed.output
        revoked = runner.invoke(cli, ["dashboard", "revoke", owner.session.id])
        assert revoked.exit_code == 0 and f"revoked {owner.session.id}" in revoked.output
        assert session_for(store, owner.token) is None
        assert session_for(store, plain.token) is not None
        again = runner.invoke(cli, ["dashboard", "revoke", owner.session.id])
        assert again.exit_code == 1 and "no live session" in again.output
        everyone = runner.invoke(cli, ["dashboard", "revoke", "--user", "ada"])
        assert "revoked 1 session" in everyone.output
        assert session_for(store, plain.token) is None
    finally:
        store.close()


def test_a_link_for_an_unknown_user_is_refused():
    result = CliRunner().invoke(cli, ["dashboard", "link", "--user", "nobody"])
    assert result.exit_code == 1 and "no user or account 'nobody'" in result.output


def test_the_owner_link_signs_in_as_the_configured_owner(monkeypatch):
    monkeypatch.setenv("IRIS_OWNER_ACCOUNTS", "telegram:42")
    result = CliRunner().invoke(cli, ["dashboard", "link"])
    assert result.exit_code == 0, result.output
    token = re.search(r"\?t=(\S+)", result.output)[1]
    store = open_store(load_settings())
    try:
        opened = redeem(store, token)
        assert opened.session.is_owner
        assert opened.session.user_id == store.users.resolve("telegram:42")
    finally:
        store.close()
