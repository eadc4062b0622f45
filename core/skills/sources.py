"""Where imported skills come from: a directory, a .zip / .tar.gz archive, or a git URL. Archives
are unpacked defensively (no absolute paths, no '..', no links or devices, size limits, counted
while extracting so a lying header cannot blow past them); git is a shallow clone with
hooks and external transports off."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO

from core.errors import IrisUsageError
from core.skills.paths import MAX_FILE_BYTES

MAX_ARCHIVE_BYTES = 64 * 1024 * 1024
MAX_ENTRIES = 2_000  # files and directories in one archive or source
GIT_TIMEOUT = 120.0
ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz", ".tar")
_GIT_URL = re.compile(r"^(?:(?:https?|ssh|git|file)://\S+|[\w.-]+@[\w.-]+:\S+)$")


@dataclass
class Unpacked:
    root: Path
    refused: dict[str, str] = field(default_factory=dict)  # archive path -> why it was left out


def is_git_url(source: str) -> bool:
    return bool(_GIT_URL.match(source))


def _safe_member(name: str) -> str | None:
    """The member's relative path if it may be extracted, else None."""
    path = name.replace("\\", "/")
    if path.startswith("/") or re.match(r"^[A-Za-z]:", path):
        return None
    parts = [p for p in PurePosixPath(path).parts if p not in ("", ".")]
    if not parts or ".." in parts or any("\x00" in p for p in parts):
        return None
    return "/".join(parts)


class _Budget:
    def __init__(self) -> None:
        self.total = 0
        self.entries = 0

    def entry(self) -> None:
        self.entries += 1
        if self.entries > MAX_ENTRIES:
            raise IrisUsageError(f"the archive has more than {MAX_ENTRIES} entries")


def _copy_limited(source: IO[bytes], target: Path, budget: _Budget) -> int:
    """Copy at most MAX_FILE_BYTES; returns bytes written or -1 when the file is too large."""
    written = 0
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("wb") as out:
        while chunk := source.read(65536):
            written += len(chunk)
            budget.total += len(chunk)
            if budget.total > MAX_ARCHIVE_BYTES:
                raise IrisUsageError(f"the archive unpacks to more than "
                                     f"{MAX_ARCHIVE_BYTES // 2**20} MiB")
            if written > MAX_FILE_BYTES:
                break
            out.write(chunk)
    if written > MAX_FILE_BYTES:
        target.unlink()
        return -1
    return written


def _unzip(archive: Path, into: Path, result: Unpacked) -> None:
    budget = _Budget()
    try:
        handle = zipfile.ZipFile(archive)
    except zipfile.BadZipFile as error:
        raise IrisUsageError(f"{archive.name} is not a readable zip file: {error}") from None
    with handle:
        for info in handle.infolist():
            budget.entry()
            rel = _safe_member(info.filename)
            if info.is_dir():
                continue
            kind = stat.S_IFMT(info.external_attr >> 16)  # 0: made without Unix file types
            if rel is None:
                result.refused[info.filename] = "its path is absolute or leaves the archive"
            elif kind == stat.S_IFLNK:
                result.refused[rel] = "it is a symbolic link"
            elif kind not in (0, stat.S_IFREG):
                result.refused[rel] = "it is not a regular file"
            elif info.file_size > MAX_FILE_BYTES:
                result.refused[rel] = f"it is over {MAX_FILE_BYTES // 1024} KiB"
            else:
                with handle.open(info) as source:
                    if _copy_limited(source, into / rel, budget) < 0:
                        result.refused[rel] = f"it is over {MAX_FILE_BYTES // 1024} KiB"


def _untar(archive: Path, into: Path, result: Unpacked) -> None:
    try:
        with tarfile.open(archive, "r:*") as handle:
            _extract_tar(handle, into, result)
    except (tarfile.TarError, EOFError, OSError) as error:
        raise IrisUsageError(f"{archive.name} is not a readable tar archive: {error}") from None


def _extract_tar(handle: tarfile.TarFile, into: Path, result: Unpacked) -> None:
    budget = _Budget()
    for member in handle:
        budget.entry()
        rel = _safe_member(member.name)
        if member.isdir():
            continue
        if rel is None:
            result.refused[member.name] = "its path is absolute or leaves the archive"
        elif member.issym() or member.islnk():
            result.refused[rel] = "it is a link"
        elif not member.isfile():
            result.refused[rel] = "it is not a regular file"
        elif member.size > MAX_FILE_BYTES:
            result.refused[rel] = f"it is over {MAX_FILE_BYTES // 1024} KiB"
        else:
            source = handle.extractfile(member)
            if source is None:
                result.refused[rel] = "it could not be read"
                continue
            with source:
                if _copy_limited(source, into / rel, budget) < 0:
                    result.refused[rel] = f"it is over {MAX_FILE_BYTES // 1024} KiB"


def _clone(url: str, into: Path) -> None:
    git = shutil.which("git")
    if git is None:
        raise IrisUsageError("importing from a git URL needs git installed")
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true"}
    command = [
        git, "-c", "protocol.ext.allow=never", "-c", "core.hooksPath=/dev/null",
        "clone", "--depth", "1", "--quiet", "--no-recurse-submodules", "--", url, str(into),
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=GIT_TIMEOUT,
                              env=env, stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired:
        raise IrisUsageError(f"git clone of {url} took longer than {GIT_TIMEOUT:.0f} s") from None
    if done.returncode != 0:
        reason = (done.stderr or done.stdout).strip().splitlines()
        raise IrisUsageError(f"git clone of {url} failed: {reason[-1] if reason else 'error'}")


@contextmanager
def open_source(source: str) -> Iterator[Unpacked]:
    """A local directory holding what ``source`` names, removed afterwards if temporary."""
    path = Path(source).expanduser()
    if path.is_dir():
        yield Unpacked(root=path)
        return
    with tempfile.TemporaryDirectory(prefix="iris-skills-") as tmp:
        into = Path(tmp) / "src"
        into.mkdir()
        result = Unpacked(root=into)
        lowered = source.lower()
        if path.is_file() and lowered.endswith(".zip"):
            _unzip(path, into, result)
        elif path.is_file() and lowered.endswith(ARCHIVE_SUFFIXES):
            _untar(path, into, result)
        elif path.is_file():
            raise IrisUsageError(f"{source}: not a directory, .zip, .tar.gz or .tgz archive")
        elif is_git_url(source):
            into.rmdir()
            _clone(source, into)
        else:
            raise IrisUsageError(f"{source}: no such directory or archive, and not a git URL")
        yield result
