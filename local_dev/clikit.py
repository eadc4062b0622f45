"""Helpers shared by the `iris` commands: settings, one-line errors, the store, users."""

from __future__ import annotations

import functools
import getpass
import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

from core.config import Settings, load_settings
from core.errors import ConfigError, IrisError, IrisUsageError, NotFound

USER_HELP = "User id or any linked account (telegram:42, slack:T1/U9, http:alice, alice) " \
    "[default: http:$USER, as `iris chat`]."


def settings_or_exit() -> Settings:
    """The settings, with IRIS_HOME created private (0700) when missing; a bad setting exits."""
    from core.private import private_dir

    try:
        settings = load_settings()
    except ConfigError as exc:
        click.echo(f"config error: {exc}", err=True)
        sys.exit(2)
    private_dir(settings.home)
    return settings


def friendly(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Iris' own errors as one line (exit 1; 2 for configuration), not a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ConfigError as exc:
            click.echo(f"config error: {exc}", err=True)
            sys.exit(2)
        except IrisError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(1)

    return wrapper


@contextmanager
def opened() -> Iterator[tuple[Settings, Any]]:
    from core.store import open_store

    settings = settings_or_exit()
    store = open_store(settings)
    try:
        yield settings, store
    finally:
        store.close()


def default_account() -> str:
    return "http:" + (re.sub(r"[^A-Za-z0-9_.@+-]", "_", os.environ.get("USER") or "me") or "me")


def operator() -> str:
    """The account the CLI acts as (approvals and lockouts are counted against it)."""
    try:
        name = getpass.getuser()
    except Exception:
        name = "operator"
    return "cli:" + (re.sub(r"[^A-Za-z0-9_.@+-]", "_", name) or "operator")


def resolve_user(store: Any, ref: str | None, *, create: bool = False) -> str:
    """The user for ``--user`` (user id, account or API user name). ``create``: an account
    that never wrote gets its user now (imports for someone new)."""
    ref = (ref or default_account()).strip()
    try:
        return store.users.resolve(ref)
    except NotFound:
        if not create or ref.startswith(("usr_", "grp_")):
            raise NotFound(
                f"no user or account {ref!r} (see `iris users list`)"
            ) from None
    account = ref if ":" in ref else f"http:{ref}"
    from core.store.users import split_account

    split_account(account)
    return store.users.for_account(account)


def need(condition: bool, message: str) -> None:
    if not condition:
        raise IrisUsageError(message)
