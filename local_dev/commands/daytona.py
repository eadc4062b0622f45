"""``iris daytona browser-snapshot``: build, once, the Daytona snapshot with Chromium that the
browser tools need in Daytona sandboxes (``sandboxes.daytona_snapshot``)."""

from __future__ import annotations

import click

from local_dev.clikit import friendly, settings_or_exit


@click.group("daytona")
def daytona_group() -> None:
    """Daytona sandboxes (IRIS_SANDBOX_BACKEND=daytona)."""


@daytona_group.command("browser-snapshot")
@click.option("--name", default=None, help="The snapshot's name [default: iris-browser-1].")
@friendly
def browser_snapshot(name: str | None) -> None:
    """Build the snapshot with Chromium for the browser tools (once per Daytona organisation;
    a few minutes on Daytona's side), then tell Iris to use it.

    \b
    Uses IRIS_DAYTONA_API_KEY (or DAYTONA_API_KEY), as Iris' sandboxes do. Afterwards set
      IRIS_DAYTONA_SNAPSHOT=<name>
    (in .env or the deployment's settings): sandboxes created from then on have Chromium.
    Existing sandboxes keep their image until they are deleted.
    """
    from core.acting.workspaces import sandbox_options
    from sandboxes.base import SandboxError
    from sandboxes.daytona_snapshot import BROWSER_SNAPSHOT, ensure_browser_snapshot

    settings = settings_or_exit()
    wanted = name or BROWSER_SNAPSHOT
    try:
        built = ensure_browser_snapshot(sandbox_options(settings), wanted, log=click.echo)
    except SandboxError as exc:
        raise click.ClickException(str(exc)) from None
    if built:
        click.echo(f"Built snapshot {wanted!r}.")
    if settings.daytona_snapshot == wanted:
        click.echo(f"IRIS_DAYTONA_SNAPSHOT is {wanted}: new sandboxes have Chromium.")
    else:
        click.echo(f"Now set IRIS_DAYTONA_SNAPSHOT={wanted} (in .env or the deployment's "
                   "settings) so new Daytona sandboxes are created from it.")


commands = [daytona_group]
