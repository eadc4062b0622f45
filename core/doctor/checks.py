"""``iris doctor``'s checks: what is wrong with a configuration, each problem with its fix.
``local_dev.doctor.run_checks`` runs them for the CLI (adding the cloud checks); the
dashboard's owner page runs them against the running app's settings and store."""

from __future__ import annotations

import asyncio
import os
import re
import stat
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from core.config import Settings, dotenv_path
from core.doctor.report import Level, Report
from core.dotenv import read_dotenv

if TYPE_CHECKING:
    from core.store import Store

TELEGRAM_TOKEN = re.compile(r"\d+:[A-Za-z0-9_-]{30,}")
TELEGRAM_SECRET = re.compile(r"[A-Za-z0-9_-]{1,256}")


ModelProbe = Callable[[Settings], None]
TokenProbe = Callable[[Mapping[str, str]], bool]  # is a Modal token found?


def check_configuration(
    report: Report, settings: Settings, environ: Mapping[str, str], *, online: bool = False,
    cloud: bool = False, probe: ModelProbe | None = None, modal_token: TokenProbe | None = None,
    store: Store | None = None,
) -> None:
    """Every check of ``settings`` (not the cloud's). With ``store`` (a running app's), the
    database is checked through it instead of a second connection."""
    report.settings = settings
    env_file = dotenv_path(settings.config_path or settings.home / "iris.yaml")
    _check_dotenv_mode(report, env_file)
    _check_store(report, settings, store)
    _check_model(report, settings, environ, online=online, cloud=cloud, probe=probe)
    _check_api_key(report, settings, cloud=cloud)
    _check_platforms(report, settings)
    if online:
        from core.doctor import platforms as doctor_platforms
        doctor_platforms.check_online(report, settings)
    _check_sandbox(report, settings, environ, cloud=cloud, modal_token=modal_token, store=store)
    _check_mcp(report, settings)
    _check_web(report, settings)
    from core.doctor import features as doctor_features
    doctor_features.check(report, settings)


def environment_of(settings: Settings, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment the checks read: ``env`` (default: this process's), then .env."""
    environ = dict(os.environ if env is None else env)
    env_file = dotenv_path(settings.config_path or settings.home / "iris.yaml")
    for key, value in read_dotenv(env_file).items():
        environ.setdefault(key, value)
    return environ


def _check_dotenv_mode(report: Report, path: os.PathLike[str]) -> None:
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return
    if mode & 0o077:
        report.add("warning", ".env", f"{path} is readable by others (mode {mode:o})",
                   f"chmod 600 {path}")


def _check_store(report: Report, settings: Settings, running: Store | None = None) -> None:
    from core.store import CHECK_RETRY_SECONDS, open_store

    try:
        store = running or open_store(settings, retry_for=CHECK_RETRY_SECONDS)
    except Exception as exc:
        fix = ("check db_url and IRIS_DB_AUTH_TOKEN (`turso db tokens create NAME`)"
               if settings.db_is_remote else "check that the directory of db_url is writable")
        report.add("error", "database", f"cannot open {settings.db_url}: {exc}", fix)
        return
    try:
        applied = store.migrations_applied()
        report.add("ok", "database", f"{settings.db_url} opened, {applied} migrations applied")
        try:
            store.objects.check()
            report.add("ok", "object store", store.objects.describe())
        except Exception as exc:
            fix = ("check the bucket, s3_endpoint_url and AWS_ACCESS_KEY_ID/"
                   "AWS_SECRET_ACCESS_KEY" if settings.objects_url.startswith("s3://")
                   else "check that objects_url is an absolute, writable directory")
            report.add("error", "object store", f"cannot use {settings.objects_url}: {exc}", fix)
    finally:
        if running is None:
            store.close()


def _check_model(
    report: Report, settings: Settings, environ: Mapping[str, str], *, online: bool,
    cloud: bool, probe: ModelProbe | None,
) -> None:
    from core.model.providers import key_status

    if not settings.model:
        level: Level = "error" if cloud else "warning"
        report.add(level, "model", "no model configured (`iris dev` then runs the embedded demo "
                   "model, which is tiny and often wrong)",
                   "model: anthropic/claude-sonnet-4-5 (or openai/gpt-4o-mini, …) in iris.yaml")
        return
    status = key_status(settings, settings.model, environ)
    if not status.ok:
        report.add("error", "model key", f"no API key for {settings.model}",
                   f"set {' or '.join(status.expected)} in .env")
    elif not status.known:
        report.add("warning", "model key", f"cannot tell which key provider {status.provider!r} "
                   "needs", "set IRIS_MODEL_API_KEY if it needs one")
    else:
        report.add("ok", "model", f"{settings.model}" + (f" (key from {status.source})"
                                                         if status.source else ""))
    if online and status.ok:
        try:
            (probe or one_token_call)(settings)
            report.add("ok", "model call", f"{settings.model} answered a 1-token request")
        except Exception as exc:
            report.add("error", "model call", f"{settings.model} failed: {exc}",
                       "check the model name, the key and model_api_base")


def one_token_call(settings: Settings) -> None:
    import dataclasses

    from core.messages import Message
    from core.model.routing import build_model

    model = dataclasses.replace(
        build_model(settings, settings.model or ""), timeout=min(settings.model_timeout, 60),
        retries=0, temperature=None, max_tokens=1, free=False)
    asyncio.run(model.complete([Message(role="user", content="Say OK.")]))


def _check_api_key(report: Report, settings: Settings, *, cloud: bool) -> None:
    if settings.api_key is None:
        level: Level = "error" if cloud else "warning"
        report.add(level, "api key", "IRIS_API_KEY is not set: `iris dev` generates one, but a "
                   "deployment refuses every HTTP API request",
                   "iris setup --non-interactive (generates one into .env)")
    else:
        report.add("ok", "api key", "IRIS_API_KEY set")


def _pair(report: Report, check: str, first: tuple[str, object], second: tuple[str, object],
          fix: str) -> bool:
    (name_a, a), (name_b, b) = first, second
    if (a is None) != (b is None):
        have, lack = (name_a, name_b) if a is not None else (name_b, name_a)
        report.add("error", check, f"{have} is set but {lack} is not", fix)
        return False
    return a is not None


def _check_platforms(report: Report, settings: Settings) -> None:
    if _pair(report, "telegram", ("IRIS_TELEGRAM_TOKEN", settings.telegram_token),
             ("IRIS_TELEGRAM_SECRET", settings.telegram_secret),
             "iris setup --non-interactive --telegram-token TOKEN (generates the secret)"):
        token = settings.secret("telegram_token") or ""
        secret = settings.secret("telegram_secret") or ""
        if not TELEGRAM_SECRET.fullmatch(secret):
            report.add("error", "telegram", "IRIS_TELEGRAM_SECRET may only hold 1-256 of "
                       "A-Z a-z 0-9 _ -", "remove it and rerun `iris setup` to generate one")
        elif not TELEGRAM_TOKEN.fullmatch(token):
            report.add("warning", "telegram", "IRIS_TELEGRAM_TOKEN does not look like a bot "
                       "token (123456:ABC…)", "copy it again from @BotFather")
        else:
            report.add("ok", "telegram", "bot token and webhook secret set")
    if _pair(report, "slack", ("IRIS_SLACK_SIGNING_SECRET", settings.slack_signing_secret),
             ("IRIS_SLACK_BOT_TOKEN", settings.slack_bot_token),
             "both come from your Slack app: Basic Information → Signing Secret, OAuth & "
             "Permissions → Bot User OAuth Token"):
        if not (settings.secret("slack_bot_token") or "").startswith("xoxb-"):
            report.add("warning", "slack", "IRIS_SLACK_BOT_TOKEN does not start with xoxb-",
                       "use the Bot User OAuth Token, not a user or app token")
        else:
            report.add("ok", "slack", "signing secret and bot token set")
    from core.doctor import platforms as doctor_platforms
    doctor_platforms.check(report, settings)


def _check_sandbox(report: Report, settings: Settings, environ: Mapping[str, str], *,
                   cloud: bool, modal_token: TokenProbe | None = None,
                   store: Store | None = None) -> None:
    backend = settings.sandbox_backend
    if backend == "modal":
        found = modal_token(environ) if modal_token is not None else bool(
            environ.get("MODAL_TOKEN_ID") and environ.get("MODAL_TOKEN_SECRET"))
        if not found and not cloud:
            report.add("warning", "sandbox", "sandbox_backend is modal but no Modal token is "
                       "found: `iris dev` cannot start sandboxes (deployed functions can)",
                       "modal token new")
        else:
            report.add("ok", "sandbox", "modal")
    elif backend == "daytona":
        if settings.daytona_api_key is None and not environ.get("DAYTONA_API_KEY"):
            report.add("error", "sandbox", "sandbox_backend is daytona but no API key is set",
                       "IRIS_DAYTONA_API_KEY=… in .env (Daytona dashboard → API Keys)")
        else:
            report.add("ok", "sandbox", "daytona")
    else:
        from core.acting.isolation import FIX, describe
        from core.store import CHECK_RETRY_SECONDS, open_store

        opened = None
        if store is None:
            try:
                opened = open_store(settings, retry_for=CHECK_RETRY_SECONDS)
            except Exception:
                opened = None  # the database check reports why; count nobody
        try:
            level, sentence = describe(settings, store or opened)
        finally:
            if opened is not None:
                opened.close()
        checked: Level = "ok" if level == "ok" else "warning" if level == "warning" else "error"
        report.add(checked, "sandbox", sentence, None if checked == "ok" else FIX)
    _check_home_mode(report, settings)


def _check_home_mode(report: Report, settings: Settings) -> None:
    try:
        mode = stat.S_IMODE(os.stat(settings.home).st_mode)
    except FileNotFoundError:
        return
    if mode & 0o077:
        report.add("warning", "home", f"{settings.home} is open to other accounts on this "
                   f"machine (mode {mode:o}): they can read every conversation",
                   f"chmod 700 {settings.home}")


def _check_web(report: Report, settings: Settings) -> None:
    from core.web.search import problem

    missing = problem(settings)
    if missing is None:
        report.add("ok", "web search", f"web_search uses {settings.web_search_provider}")
    elif settings.web_search_provider is None:
        how = missing.removeprefix("no search provider: ")
        report.add("ok", "web search", f"off (web_search is not offered); to enable it, {how}")
    else:
        report.add("warning", "web search", f"off: {missing}",
                   "set it in .env, or unset IRIS_WEB_SEARCH_PROVIDER")
    if settings.web_allow_hosts:
        report.add("warning", "web extract",
                   f"may reach private addresses of {', '.join(settings.web_allow_hosts)} "
                   "(so may notification webhooks users register)",
                   "keep IRIS_WEB_ALLOW_HOSTS to hosts you mean the model to read")


def _check_mcp(report: Report, settings: Settings) -> None:
    if not settings.mcp_servers:
        return
    from core.config.mcp import parse_mcp_servers

    try:
        servers = parse_mcp_servers(settings.mcp_servers)
    except ValueError as exc:
        report.add("error", "mcp", str(exc), "fix mcp_servers in iris.yaml")
        return
    report.add("ok", "mcp", f"{len(servers)} server(s): {', '.join(sorted(servers))}")
