"""``iris persona …``: show or edit how Iris is with a user (their persona prompt section)."""

from __future__ import annotations

import click

from core.errors import IrisUsageError
from local_dev.clikit import USER_HELP, friendly, opened, resolve_user


@click.group("persona")
def persona_group() -> None:
    """A user's persona: a few lines on how Iris should be with them (tone, name, manner),
    sent with every message. Imported from Hermes' SOUL.md by `iris import-hermes`; scanned
    like memory when written and when loaded.

    \b
    Examples:
      iris persona show --user telegram:42
      EDITOR=nano iris persona edit --user alice
    """


@persona_group.command("show")
@click.option("--user", "user_ref", help=USER_HELP)
@friendly
def persona_show(user_ref: str | None) -> None:
    """Print the user's persona and where it came from.

    Example: iris persona show --user telegram:42
    """
    with opened() as (_settings, store):
        row = store.personas.get(resolve_user(store, user_ref))
        if row is None:
            click.echo("no persona set")
            return
        click.echo(f"# from {row.source}" + (f" by {row.updated_by}" if row.updated_by else ""))
        click.echo(row.content)


@persona_group.command("edit")
@click.option("--user", "user_ref", help=USER_HELP)
@friendly
def persona_edit(user_ref: str | None) -> None:
    """Edit the persona in $EDITOR; an empty text removes it. A refused text (too long, or
    flagged by the safety scan) changes nothing and your text is kept in a file.

    Example: EDITOR=nano iris persona edit --user alice
    """
    from core.memory.persona import PersonaRefused, clear_persona, set_persona

    with opened() as (settings, store):
        user_id = resolve_user(store, user_ref)
        row = store.personas.get(user_id)
        original = row.content if row else ""
        edited = click.edit(original, extension=".md", require_save=True)
        if edited is None or edited.strip() == original.strip():
            click.echo("no changes")
            return
        if not edited.strip():
            clear_persona(store, user_id)
            click.echo("persona removed")
            return
        try:
            set_persona(store, user_id, edited, source="user", by="cli edit")
        except PersonaRefused as exc:
            keep = settings.home / f"persona-edit-{int(store.clock.now())}.md"
            keep.parent.mkdir(parents=True, exist_ok=True)
            keep.write_text(edited, encoding="utf-8")
            raise IrisUsageError(f"{exc}. Your edited text is saved in {keep}") from None
        click.echo("persona saved; it applies from the user's next session")


commands = [persona_group]
