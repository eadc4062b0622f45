"""``iris sessions …``: list, show, search, import and export conversations."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import click

from core.errors import NotFound
from local_dev.clikit import USER_HELP, friendly, opened, resolve_user

if TYPE_CHECKING:
    from core.store import Store


@contextmanager
def _open() -> Iterator[Store]:
    with opened() as (_, store):
        yield store


def _users(store: Store, ref: str | None) -> list[str]:
    if ref is None:
        return [u.id for u in store.users.list_all()]
    return [store.users.resolve(ref)]


def _when(epoch: float | None) -> str:
    if epoch is None:
        return "-"
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M")


def _since(value: str | None) -> float | None:
    from core.sessions.transfer import parse_time

    if value is None:
        return None
    try:
        return parse_time(value, field="--since")
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@click.group("sessions")
def sessions_group() -> None:
    """Conversations: list, read, search, import and export them.

    \b
    Examples:
      iris sessions list --user alice
      iris sessions search "deploy script" --user alice --json
      iris sessions import history.jsonl
      iris sessions reindex --user alice
      iris sessions export --format sharegpt --since 2024-01-01 > train.jsonl
    """


@sessions_group.command("list")
@click.option("--user", "user_ref", help="User id or account (default: every user).")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 100_000))
@click.option("--json", "as_json", is_flag=True, help="Print JSON lines.")
@friendly
def sessions_list(user_ref: str | None, limit: int, as_json: bool) -> None:
    """List sessions, most recently active first.

    Example: iris sessions list --user telegram:4242
    """
    with _open() as store:
        for user_id in _users(store, user_ref):
            for row in store.transcripts.sessions(user_id, limit=limit):
                s = row.session
                if as_json:
                    click.echo(json.dumps({
                        "user_id": user_id, "session_id": s.id, "external_id": row.external_id,
                        "title": s.title, "chat_key": s.chat_key, "started_at": s.started_at,
                        "last_active_at": s.last_active_at, "messages": row.message_count,
                        "ended": s.ended_at is not None,
                    }))
                    continue
                open_tag = "" if s.ended_at else " (open)"
                click.echo(
                    f"{s.id}  {_when(s.started_at)} → {_when(s.last_active_at)}  "
                    f"{row.message_count:>5} msgs  {user_id}  {s.chat_key}{open_tag}  "
                    f"{s.title or '(untitled)'}"
                )


@sessions_group.command("show")
@click.argument("session_ref")
@click.option("--user", "user_ref", help="User id or account (default: search every user).")
@click.option("--json", "as_json", is_flag=True, help="Print the session as one JSON line.")
@friendly
def sessions_show(session_ref: str, user_ref: str | None, as_json: bool) -> None:
    """Print a session's messages (compacted ones are marked) and its summaries.

    Example: iris sessions show ses_018c2f3a9b1e4d7a2c
    """
    from core.sessions.transfer import export_sessions

    with _open() as store:
        for user_id in _users(store, user_ref):
            session_id = store.search.resolve_session(user_id, session_ref)
            if session_id is None:
                continue
            if as_json:
                for record in export_sessions(store, [user_id], fmt="iris",
                                              session_ref=session_id):
                    click.echo(json.dumps(record, ensure_ascii=False))
                return
            session = store.sessions.get(user_id, session_id)
            click.echo(f"# {session.title or '(untitled)'}  [{session.id}, user {user_id}, "
                       f"{session.chat_key}, started {_when(session.started_at)}]")
            for summary in store.compaction.history(user_id, session_id):
                click.echo(f"\n-- summary #{summary.id} ({summary.compacted_count} messages "
                           f"compacted, {_when(summary.created_at)}) --\n{summary.content}")
            click.echo("")
            for stored in store.messages.for_session(user_id, session_id):
                m = stored.message
                tag = " (compacted)" if stored.compacted else ""
                name = f" {m.name}" if m.role == "tool" and m.name else ""
                click.echo(f"[#{stored.id} {_when(stored.created_at)} {m.role}{name}{tag}] "
                           f"{m.content}")
                for call in m.tool_calls:
                    click.echo(f"    → {call.name}({call.arguments})")
            return
        raise NotFound(f"no session {session_ref!r}")


@sessions_group.command("search")
@click.argument("query")
@click.option("--user", "user_ref", help=USER_HELP)
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 100))
@click.option("--session", "session_ref", help="Only this session.")
@click.option("--role", type=click.Choice(["user", "assistant", "tool", "system"]))
@click.option("--since", help="ISO date or time.")
@click.option("--until", help="ISO date or time (exclusive).")
@click.option("--json", "as_json", is_flag=True, help="Print the ranked hits as a JSON list.")
@friendly
def sessions_search(query: str, user_ref: str | None, limit: int, session_ref: str | None,
                    role: str | None, since: str | None, until: str | None,
                    as_json: bool) -> None:
    """Search one user's messages (the same ranking as the session_search tool).

    Example: iris sessions search "postgres migration error" --user alice --limit 5
    """
    from core.search.engine import search_messages
    from core.store.search import Filters

    if not query.strip():
        raise click.BadParameter("give some words to search for", param_hint="QUERY")
    with opened() as (settings, store):
        user_id = resolve_user(store, user_ref)
        scoped = None
        if session_ref:
            scoped = store.search.resolve_session(user_id, session_ref)
            if scoped is None:
                raise NotFound(f"no session {session_ref!r} for this user")
        filters = Filters(session_id=scoped, role=role, since=_since(since), until=_since(until))
        hits = search_messages(store, user_id, query, limit=limit, filters=filters,
                               timezone=settings.timezone)
        if as_json:
            click.echo(json.dumps([h.to_json(i) for i, h in enumerate(hits, 1)],
                                  ensure_ascii=False))
            return
        if not hits:
            click.echo("no matches")
        for i, hit in enumerate(hits, 1):
            title = f' "{hit.session_title}"' if hit.session_title else ""
            click.echo(f"{i:>2}. {hit.score:.3f}  {hit.public_session_id}{title}  "
                       f"#{hit.message_id} {hit.role} {_when(hit.created_at)}\n    {hit.snippet}")


@sessions_group.command("import")
@click.argument("path", type=click.File("rb"))
@click.option("--format", "fmt", type=click.Choice(["auto", "iris", "openai-jsonl", "sharegpt"]),
              default="auto", show_default=True,
              help="The file's format; auto tells it from the content.")
@click.option("--user", "user_ref",
              help="The user who gets every conversation of an openai-jsonl or sharegpt file "
                   "(they name none); a user id or account, or a name for http:<name>.")
@click.option("--no-create-users", is_flag=True,
              help="Refuse users that do not exist yet (default: create them).")
@click.option("--embed", "embed_mode", type=click.Choice(["full", "fast", "none"]),
              default="full", show_default=True,
              help="Vectors for semantic search: full model, fast static vectors, or none now "
                   "(searches and `iris sessions reindex` add them later).")
@friendly
def sessions_import(path: Any, fmt: str, user_ref: str | None, no_create_users: bool,
                    embed_mode: str) -> None:
    """Import past sessions ('-' reads standard input).

    \b
    Iris lines (what `iris sessions export` writes), one per session:
      {"user": "alice", "session_id": "s1", "started_at": "2024-05-01T10:00:00Z",
       "title": "optional", "messages": [{"role": "user", "content": "…",
       "timestamp": "…", "id": "m1"}]}
    OpenAI chat JSONL ({"messages": [...]} per line) and ShareGPT ([{"conversations":
    [{"from": "human", "value": "…"}]}], or one per line) name no user: each conversation
    becomes a session of --user, with an id derived from its messages.
    A user is a user id or an account; an unknown bare name becomes the HTTP API user
    http:<name>. The file is validated whole first; a session already imported is skipped.
    Images (a message's "images" with data: URLs, as `iris sessions export` writes them, or
    OpenAI-style image_url parts) are checked as live images are and stored for the user;
    http(s) image URLs are never fetched. Each image not imported is listed with its reason.
    Imported messages then get semantic-search vectors (--embed).

    \b
    Examples:
      iris sessions import history.jsonl --embed fast
      iris sessions import chatgpt-finetune.jsonl --user alice
      iris sessions import sharegpt.json --format sharegpt --user telegram:42
    """
    from core.errors import IrisUsageError
    from core.sessions.import_formats import MAX_IMPORT_BYTES, read_import, session_lines
    from core.sessions.transfer import import_sessions

    source = getattr(path, "name", None)
    source = source if isinstance(source, str) else "input"
    parsed = read_import(path.read(MAX_IMPORT_BYTES + 1), source, fmt)
    if parsed.fmt == "iris" and user_ref is not None:
        raise IrisUsageError("Iris lines name their own users; --user is for openai-jsonl and "
                             "sharegpt files")
    if parsed.fmt != "iris" and not (user_ref or "").strip():
        raise IrisUsageError(f"this {parsed.fmt} file names no user: say whose conversations "
                             "they are with --user")
    with opened() as (settings, store):
        lines = list(parsed.lines) or session_lines(parsed.conversations, str(user_ref).strip(),
                                                    started_at=store.clock.now())
        report = import_sessions(store, lines, create_users=not no_create_users,
                                 image_max_bytes=settings.image_max_bytes)
        click.echo(f"imported {report.sessions} sessions ({report.messages} messages) for "
                   f"{len(report.users)} users; {report.skipped} already present")
        images = report.images_line()
        if images:
            click.echo(images)
        for note in report.image_notes:
            click.echo(f"  {note}", err=True)
        if embed_mode != "none" and report.messages:
            _embed_users(store, sorted(set(report.users.values())), fast=embed_mode == "fast")


def _embed_users(store: Store, user_ids: list[str], *, fast: bool, force: bool = False) -> None:
    from core.search import embed
    from core.search.encoder import INSTALL_HINT

    if not embed.available():
        click.echo(f"semantic search vectors skipped: {INSTALL_HINT}", err=True)
        return
    total = sum(store.messages.count(u) if force
                else store.vectors.count_missing(u, None if fast else embed.FULL)
                for u in user_ids)
    done = 0

    def progress(count: int) -> None:
        nonlocal done
        done += count
        click.echo(f"\r  embedding {done}/{total} messages", nl=False, err=True)

    embedded = seconds = 0.0
    for user_id in user_ids:
        report = embed.reindex(store, user_id, fast=fast, force=force, progress=progress)
        embedded += report.embedded
        seconds += report.seconds
    if done:
        click.echo("", err=True)
    rate = f" ({embedded / seconds:,.0f} messages/s)" if seconds > 0 and embedded else ""
    kind = "static (fast)" if fast else "full-model"
    click.echo(f"{kind} vectors for {int(embedded)} messages of {len(user_ids)} users in "
               f"{seconds:.1f} s{rate}")


@sessions_group.command("reindex")
@click.option("--user", "user_ref", help="User id or account (default: every user).")
@click.option("--fast", is_flag=True,
              help="Static vectors for messages with none (much faster, less accurate).")
@click.option("--force", is_flag=True, help="Drop the users' vectors and compute them again.")
@friendly
def sessions_reindex(user_ref: str | None, fast: bool, force: bool) -> None:
    """Compute semantic-search vectors for messages that have none.

    Without --fast every message gets full-model vectors (static ones are replaced). New
    messages get vectors after each turn and searches fill gaps a few at a time; this catches
    up a whole history at once.

    Example: iris sessions reindex --user alice
    """
    with _open() as store:
        _embed_users(store, _users(store, user_ref), fast=fast, force=force)


@sessions_group.command("export")
@click.option("--format", "fmt", type=click.Choice(["iris", "openai-jsonl", "sharegpt"]),
              default="iris", show_default=True,
              help="iris: re-importable lines; openai-jsonl / sharegpt: fine-tuning data.")
@click.option("--user", "user_ref", help="User id or account (default: every user).")
@click.option("--since", help="Only sessions active since this ISO date or time.")
@click.option("--session", "session_ref", help="Only this session.")
@click.option("-o", "--output", type=click.File("w", encoding="utf-8"), default="-",
              help="File to write (default: standard output).")
@friendly
def sessions_export(fmt: str, user_ref: str | None, since: str | None,
                    session_ref: str | None, output: Any) -> None:
    """Write sessions as JSON lines, tool calls and results included (trajectories).

    Example: iris sessions export --format openai-jsonl --user alice -o alice.jsonl
    """
    from core.sessions.transfer import export_sessions

    count = 0
    with _open() as store:
        users = _users(store, user_ref)
        for record in export_sessions(store, users, fmt=fmt, since=_since(since),
                                      session_ref=session_ref):
            output.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    click.echo(f"exported {count} sessions", err=True)


commands = [sessions_group]
