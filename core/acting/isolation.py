"""Which walls the local sandbox backend puts around commands (setting ``sandbox_isolation``).

``auto`` (the default) isolates each command with bubblewrap when it is installed. Without it,
the local backend runs commands as plain subprocesses, which is fit only for one trusted
person: as soon as Iris serves more than one person, or any messaging platform (where
strangers can write), it refuses to run their commands and says how to fix it. ``bwrap``
demands isolation; ``none`` opts out of it knowingly (a single trusted user).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from core.errors import ConfigError

if TYPE_CHECKING:
    from core.config import Settings
    from core.store import Store

Isolation = Literal["bwrap", "none"]

FIX = ("install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap), or set "
       "sandbox_isolation: none if this Iris serves one trusted person only")


def shared_by_strangers(settings: Settings, store: Store | None) -> str | None:
    """Why this deployment is not a single trusted person's, or None when it is."""
    from core.platforms.registry import PLATFORMS

    if platforms := sorted(PLATFORMS.senders(settings)):
        return f"it answers on {', '.join(platforms)}"
    if store is not None and (people := store.users.count_people()) > 1:
        return f"it serves {people} people"
    return None


def local_isolation(settings: Settings, store: Store | None) -> Isolation:
    """The isolation local commands run with; ConfigError when none is safe and none is
    available."""
    from sandboxes.isolation import bwrap_path

    wanted = settings.sandbox_isolation
    if wanted == "none":
        return "none"
    if bwrap_path() is not None:
        return "bwrap"
    if wanted == "bwrap":
        raise ConfigError("IRIS_SANDBOX_ISOLATION", f"is bwrap but bubblewrap is not installed: "
                          f"{FIX}")
    if (why := shared_by_strangers(settings, store)) is not None:
        raise ConfigError(
            "IRIS_SANDBOX_ISOLATION",
            f"the local sandbox cannot keep users' commands apart ({why}) without bubblewrap: "
            f"{FIX}",
        )
    return "none"


def describe(settings: Settings, store: Store | None) -> tuple[str, str]:
    """(level, sentence) for ``iris doctor``: which isolation local commands get."""
    try:
        isolation = local_isolation(settings, store)
    except ConfigError as exc:
        return "error", str(exc)
    if isolation == "bwrap":
        return "ok", ("local, isolated: each command in a bubblewrap container with only its "
                      "user's workspace")
    if settings.sandbox_isolation == "none":
        return "warning", ("local, NOT isolated (sandbox_isolation: none): commands can read "
                           "everything this account can, IRIS_HOME included; one trusted "
                           "person only")
    return "warning", ("local, not isolated (bubblewrap is not installed): fine for you alone; "
                       f"before anyone else talks to this Iris, {FIX}")
