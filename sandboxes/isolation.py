"""Walls for the local backend: each command in its own bubblewrap (``bwrap``) container.

Inside, a command sees the host's programs read-only (``/usr`` and the few ``/etc`` files that
name lookups, TLS and locales need), its own user's workspace read-write at ``/workspace``, and
nothing else of the host: a private ``/proc`` (its own processes only), ``/tmp`` and ``/dev``,
a throwaway HOME outside the workspace, no host environment variables, and no view of
IRIS_HOME (the database, other users' workspaces, secrets). Every process of the command ends
with it (a new PID namespace, killed with its parent).
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

WORKSPACE = PurePosixPath("/workspace")
HOME = PurePosixPath("/home/iris")  # on the container's own tmpfs root: gone after the command
ROOT_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
ETC_FILES = (
    "resolv.conf", "hosts", "nsswitch.conf", "host.conf", "gai.conf", "services", "protocols",
    "ssl", "ca-certificates", "ca-certificates.conf", "pki", "passwd", "group", "ld.so.cache",
    "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "timezone", "mime.types",
    "os-release", "debian_version", "bash.bashrc", "inputrc",
)


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def bwrap_argv(
    bwrap: str, workspace: Path, cwd: PurePosixPath, env: Mapping[str, str], *,
    network: bool = True, root: Path = Path("/"),
) -> list[str]:
    """The ``bwrap`` command line that runs what follows it in a container holding only
    ``workspace`` (at /workspace, ``cwd`` relative to it) and ``env`` (nothing else)."""
    argv = [bwrap, "--die-with-parent", "--unshare-all", "--new-session"]
    if network:
        argv.append("--share-net")
    argv += ["--ro-bind", str(root / "usr"), "/usr"]
    for name in ROOT_DIRS:
        host = root / name
        if host.is_symlink():
            argv += ["--symlink", str(host.readlink()), f"/{name}"]
        elif host.is_dir():
            argv += ["--ro-bind", str(host), f"/{name}"]
    for name in ETC_FILES:
        argv += ["--ro-bind-try", str(root / "etc" / name), f"/etc/{name}"]
    argv += [
        "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", str(HOME),
        "--bind", str(workspace), str(WORKSPACE), "--chdir", str(WORKSPACE / cwd),
        "--clearenv",
    ]
    for name, value in env.items():
        argv += ["--setenv", name, value]
    argv += ["--setenv", "HOME", str(HOME)]
    return argv
