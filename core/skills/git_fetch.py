"""Cloning a skills repository a user named (the dashboard's import): https only, its host
checked like a web fetch (``core.web``: no loopback, private, link-local or metadata
addresses) and git's connection pinned to that checked address (so a second DNS answer cannot
send it elsewhere), no redirects, no other protocol, no credentials, no hooks, and bounded in
bytes and time (the clone is killed past either)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from core.addresses import AddressRefused
from core.errors import IrisUsageError
from core.web.fetch import (
    FetchFailed,
    FetchPolicy,
    Resolver,
    check_target,
    parse_url,
    system_resolver,
)

MAX_CLONE_BYTES = 64 * 1024 * 1024
CLONE_SECONDS = 120.0
WATCH_SECONDS = 0.2
PASSED_ENV = ("PATH", "LANG", "LC_ALL", "GIT_SSL_CAINFO", "SSL_CERT_FILE", "SSL_CERT_DIR")


@dataclass(frozen=True)
class CheckedRepo:
    url: str
    pin: str  # host:port:address, git's http.curloptResolve


async def check_repo_url(text: str, policy: FetchPolicy, *,
                         resolver: Resolver = system_resolver) -> CheckedRepo:
    """The URL and the address git must connect to; ``IrisUsageError`` saying why not."""
    try:
        url = parse_url(text)
        if url.scheme != "https":
            raise AddressRefused("only https:// git URLs are imported")
        target = await check_target(url, policy, resolver)
    except (AddressRefused, FetchFailed) as exc:
        raise IrisUsageError(f"cannot import from {text.strip()[:200]}: {exc}") from None
    host = url.raw_host.decode("ascii")
    address = target.url.host
    shown = f"[{address}]" if ":" in address else address
    return CheckedRepo(url=str(url), pin=f"{host}:{url.port or 443}:{shown}")


def _size(root: Path) -> int:
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                continue
    return total


def clone(repo: CheckedRepo, into: Path, *, max_bytes: int = MAX_CLONE_BYTES,
          seconds: float = CLONE_SECONDS,
          progress: Callable[[str], None] = lambda stage: None) -> None:
    """A shallow clone of ``repo`` into ``into`` (which must not exist). Blocking: run it in a
    thread. Raises ``IrisUsageError`` when git fails or a cap is passed."""
    git = shutil.which("git")
    if git is None:
        raise IrisUsageError("importing from a git URL needs git installed")
    with tempfile.TemporaryDirectory(prefix="iris-git-home-") as home:
        env = {k: v for k, v in os.environ.items() if k in PASSED_ENV}
        env.update(HOME=home, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull,
                   GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="true", GIT_LFS_SKIP_SMUDGE="1")
        command = [
            git, "-c", "protocol.allow=never", "-c", "protocol.https.allow=always",
            "-c", "http.followRedirects=false", "-c", f"http.curloptResolve={repo.pin}",
            "-c", "core.hooksPath=/dev/null", "-c", "credential.helper=",
            "clone", "--depth", "1", "--single-branch", "--no-tags", "--quiet",
            "--no-recurse-submodules", "--", repo.url, str(into),
        ]
        started = time.monotonic()
        with subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as process:
            try:
                while process.poll() is None:
                    size = _size(into) if into.exists() else 0
                    if size > max_bytes:
                        raise IrisUsageError(f"the repository is over {max_bytes // 2**20} MiB")
                    if time.monotonic() - started > seconds:
                        raise IrisUsageError(f"cloning took longer than {seconds:.0f} s")
                    progress(f"Cloning {repo.url}: {size // 1024:,} KiB received")
                    with suppress(subprocess.TimeoutExpired):
                        process.wait(WATCH_SECONDS)
            except BaseException:
                process.kill()
                process.wait()
                shutil.rmtree(into, ignore_errors=True)
                raise
            error = (process.stderr.read() if process.stderr else b"").decode(errors="replace")
        if process.returncode != 0:
            shutil.rmtree(into, ignore_errors=True)
            lines = [line for line in error.strip().splitlines() if line.strip()]
            raise IrisUsageError(f"git clone of {repo.url} failed: "
                                 f"{lines[-1][:300] if lines else 'error'}")
        if _size(into) > max_bytes:
            shutil.rmtree(into, ignore_errors=True)
            raise IrisUsageError(f"the repository is over {max_bytes // 2**20} MiB")
