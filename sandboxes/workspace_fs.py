"""Local workspace files, opened beneath a descriptor of the workspace and never through a
symbolic link, so nothing a command in the sandbox does at the same time (swapping a folder
for a link to a host path, in a loop) can make Iris read or write outside the workspace.

Every operation opens the workspace directory, then the path beneath it: with Linux'
``openat2`` (``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS``) where the kernel has it, else one
component at a time with ``O_NOFOLLOW | O_DIRECTORY``. Writes go to a temporary file in the
opened parent directory and are renamed over the target inside it. Only regular files are
read: the file is opened non-blocking (a named pipe answers at once), checked with ``fstat``
before any byte is read, and read only up to the caller's limit or window.

These functions block (they are plain system calls); ``sandboxes.file_pool`` runs them.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import platform
import posixpath
import secrets
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from sandboxes.base import (
    DirEntry,
    FileStat,
    FileWindow,
    LinkRefused,
    PathOutsideWorkspace,
    SandboxError,
    SandboxFileNotFound,
    kind_of_mode,
    not_regular,
    too_large,
)

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_NOCTTY | os.O_CLOEXEC
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK = 1 << 20

_SYS_OPENAT2 = 437  # in the unified table every architecture below has used since Linux 5.6
_OPENAT2_MACHINES = frozenset({"x86_64", "aarch64", "arm64", "riscv64", "ppc64le", "s390x"})
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_RESOLVE = _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64)]


class Openat2:
    """``openat2(dir_fd, path, {flags, mode, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS})``."""

    def __init__(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self._syscall = libc.syscall
        self._syscall.restype = ctypes.c_long

    def open(self, dir_fd: int, path: str, flags: int, mode: int = 0) -> int:
        how = _OpenHow(flags, mode if flags & os.O_CREAT else 0, _RESOLVE)
        fd = self._syscall(ctypes.c_long(_SYS_OPENAT2), ctypes.c_int(dir_fd),
                           ctypes.c_char_p(os.fsencode(path)), ctypes.byref(how),
                           ctypes.c_size_t(ctypes.sizeof(how)))
        if fd < 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code), path)
        return int(fd)


@cache
def openat2_available() -> Openat2 | None:
    """``Openat2`` when this kernel has it (and no seccomp filter hides it), else None."""
    if platform.system() != "Linux" or platform.machine() not in _OPENAT2_MACHINES:
        return None
    try:
        call = Openat2()
        root = os.open("/", _DIR_FLAGS)
    except OSError:
        return None
    try:
        os.close(call.open(root, ".", _DIR_FLAGS))
    except OSError:
        return None
    finally:
        os.close(root)
    return call


class WorkspaceFiles:
    """File operations on one local workspace directory (blocking calls).

    ``use_openat2=False`` always walks component by component (the path taken on kernels
    without ``openat2``)."""

    def __init__(self, root: Path, *, use_openat2: bool = True) -> None:
        self.root = Path(root)
        self._openat2 = openat2_available() if use_openat2 else None

    @property
    def uses_openat2(self) -> bool:
        return self._openat2 is not None

    def parts(self, path: str) -> tuple[str, ...]:
        """``path`` (relative, or absolute under the workspace) as names beneath it; ``..``
        that climbs out, a NUL byte or another absolute path is refused."""
        if "\x00" in path:
            raise PathOutsideWorkspace(f"path contains a NUL byte: {path!r}")
        relative = path
        if path.startswith("/"):
            norm = posixpath.normpath(path)
            for base in dict.fromkeys((str(self.root), str(self.root.resolve()))):
                if norm == base or norm.startswith(base.rstrip("/") + "/"):
                    relative = norm[len(base):].lstrip("/") or "."
                    break
            else:
                raise PathOutsideWorkspace(f"path {path!r} is outside the workspace")
        norm = posixpath.normpath(relative)
        if norm == ".." or norm.startswith("../"):
            raise PathOutsideWorkspace(f"path {path!r} is outside the workspace")
        return () if norm == "." else tuple(norm.split("/"))

    # -- operations ------------------------------------------------------------------------

    def read(self, path: str, max_bytes: int) -> bytes:
        with self._regular(path) as (fd, size):
            if size > max_bytes:
                raise too_large(path, size, max_bytes)
            chunks: list[bytes] = []
            total = 0
            while chunk := os.read(fd, min(_CHUNK, max_bytes + 1 - total)):
                chunks.append(chunk)
                total += len(chunk)
                if total > max_bytes:  # it grew after fstat
                    raise too_large(path, total, max_bytes)
            return b"".join(chunks)

    def read_range(self, path: str, offset: int, length: int) -> FileWindow:
        if offset < 0 or length < 0:
            raise SandboxError("offset and length must not be negative")
        with self._regular(path) as (fd, size):
            chunks: list[bytes] = []
            got = 0
            while got < length:
                chunk = os.pread(fd, min(_CHUNK, length - got), offset + got)
                if not chunk:
                    break
                chunks.append(chunk)
                got += len(chunk)
            return FileWindow(data=b"".join(chunks), offset=offset, size=size)

    def stat(self, path: str) -> FileStat:
        parts = self.parts(path)
        with self._parent(parts, path, create=False) as parent:
            try:
                st = os.stat(parts[-1], dir_fd=parent, follow_symlinks=False) if parts else \
                    os.fstat(parent)
            except OSError as exc:
                raise self._error(exc, path) from None
        return FileStat(kind=kind_of_mode(st.st_mode), size=st.st_size)

    def listing(self, path: str) -> list[DirEntry]:
        parts = self.parts(path)
        with self._root() as root:
            try:
                fd = self._open(root, parts, _DIR_FLAGS, path) if parts else os.dup(root)
            except SandboxFileNotFound:
                raise SandboxFileNotFound(
                    f"no such directory in the workspace: {path!r}") from None
        try:
            with os.scandir(fd) as entries:
                listed = [DirEntry(name=e.name, is_dir=e.is_dir(follow_symlinks=False),
                                   size=e.stat(follow_symlinks=False).st_size) for e in entries]
        except OSError as exc:
            raise self._error(exc, path) from None
        finally:
            os.close(fd)
        return sorted(listed, key=lambda entry: entry.name)

    def write(self, path: str, data: bytes) -> None:
        parts = self.parts(path)
        if not parts:
            raise SandboxError("cannot write over the workspace directory itself")
        name = parts[-1]
        with self._parent(parts, path, create=True) as parent:
            mode = 0o644
            with contextlib.suppress(FileNotFoundError):
                before = os.stat(name, dir_fd=parent, follow_symlinks=False)
                kind = kind_of_mode(before.st_mode)
                if kind == "link":
                    raise _link(path)
                if kind == "dir":
                    raise SandboxError(f"{path!r} is a directory")
                mode = before.st_mode & 0o777
            temp = f".iris-{secrets.token_hex(8)}.tmp"
            try:
                fd = os.open(temp, _TEMP_FLAGS, 0o600, dir_fd=parent)
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view):]
                    os.fchmod(fd, mode)
                finally:
                    os.close(fd)
                os.replace(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=parent)
                raise SandboxError(f"cannot write {path!r}: {exc.strerror or exc}") from None

    def make_dirs(self, path: str) -> None:
        parts = self.parts(path)
        with self._root() as root:
            os.close(self._dirs(root, parts, path, create=True))

    def delete(self, path: str) -> None:
        """Remove a file, a link (not what it points to) or an empty directory."""
        parts = self.parts(path)
        if not parts:
            raise SandboxError("cannot delete the workspace directory itself")
        with self._parent(parts, path, create=False) as parent:
            try:
                st = os.stat(parts[-1], dir_fd=parent, follow_symlinks=False)
                if kind_of_mode(st.st_mode) == "dir":
                    os.rmdir(parts[-1], dir_fd=parent)
                else:
                    os.unlink(parts[-1], dir_fd=parent)
            except OSError as exc:
                raise self._error(exc, path) from None

    # -- opening ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def _root(self) -> Iterator[int]:
        try:
            fd = os.open(self.root, _DIR_FLAGS)
        except OSError as exc:
            raise SandboxError(f"the workspace cannot be opened: {exc.strerror}") from None
        try:
            yield fd
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def _regular(self, path: str) -> Iterator[tuple[int, int]]:
        """A descriptor of the regular file at ``path`` and its size; anything else is
        refused after ``fstat``, before a byte is read."""
        parts = self.parts(path)
        if not parts:
            raise not_regular(path, "dir")
        with self._root() as root:
            fd = self._open(root, parts, _READ_FLAGS, path)
        try:
            st = os.fstat(fd)
            kind = kind_of_mode(st.st_mode)
            if kind != "file":
                raise not_regular(path, kind)
            yield fd, st.st_size
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def _parent(self, parts: tuple[str, ...], shown: str, *, create: bool) -> Iterator[int]:
        with self._root() as root:
            parent = self._dirs(root, parts[:-1], shown, create=create)
        try:
            yield parent
        finally:
            os.close(parent)

    def _open(self, dir_fd: int, parts: tuple[str, ...], flags: int, shown: str) -> int:
        try:
            if self._openat2 is not None:
                return self._openat2.open(dir_fd, "/".join(parts), flags)
            return self._walk(dir_fd, parts, flags)
        except OSError as exc:
            dirs = parts if flags & os.O_DIRECTORY else parts[:-1]
            raise self._error(exc, shown, dir_fd, dirs) from None

    def _walk(self, dir_fd: int, parts: tuple[str, ...], flags: int) -> int:
        fd = dir_fd
        try:
            for name in parts[:-1]:
                inner = os.open(name, _DIR_FLAGS, dir_fd=fd)
                if fd != dir_fd:
                    os.close(fd)
                fd = inner
            return os.open(parts[-1], flags | os.O_NOFOLLOW, dir_fd=fd)
        finally:
            if fd != dir_fd:
                os.close(fd)

    def _dirs(self, root: int, parts: tuple[str, ...], shown: str, *, create: bool) -> int:
        """A descriptor of the directory ``parts`` beneath ``root``, made when ``create``."""
        if not parts:
            return os.dup(root)
        try:
            return self._open(root, parts, _DIR_FLAGS, shown)
        except SandboxFileNotFound:
            if not create:
                raise
        fd = os.dup(root)
        try:
            for name in parts:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o755, dir_fd=fd)
                inner = os.open(name, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = inner
        except OSError as exc:
            os.close(fd)
            raise self._error(exc, shown, root, parts) from None
        return fd

    def _error(self, exc: OSError, shown: str, dir_fd: int | None = None,
               dirs: tuple[str, ...] = ()) -> SandboxError:
        """``dirs``: the components that had to be directories (to word ENOTDIR)."""
        code = exc.errno
        if code == errno.ENOENT:
            return SandboxFileNotFound(f"no such file in the workspace: {shown!r}")
        if code == errno.ELOOP:
            return _link(shown)
        if code == errno.EXDEV:
            return PathOutsideWorkspace(f"path {shown!r} is outside the workspace")
        if code == errno.ENOTDIR:
            if dir_fd is not None and not _has_file(dir_fd, dirs):
                return _link(shown)  # a link, or swapped for one while it was opened
            return SandboxError(f"{shown!r} is not a directory, or a folder on its way is a file")
        if code == errno.ENXIO:
            return not_regular(shown, "socket")
        if code == errno.EISDIR:
            return SandboxError(f"{shown!r} is a directory")
        return SandboxError(f"cannot open {shown!r}: {exc.strerror or exc}")


def _link(shown: str) -> LinkRefused:
    return LinkRefused(f"{shown!r} goes through a symbolic link; file tools never follow links, "
                       "so none can lead outside the workspace (use the link's target path)")


def _has_file(dir_fd: int, dirs: tuple[str, ...]) -> bool:
    """Whether one of ``dirs`` (components that had to be directories) is neither a directory
    nor a link, to word an error: ENOTDIR with no such component means a link was met. The
    path is looked at again after the failure, so a component that changed meanwhile (a swap
    in progress) also counts as a link."""
    fd = os.dup(dir_fd)
    try:
        for name in dirs:
            kind = kind_of_mode(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
            if kind == "link":
                return False
            if kind != "dir":
                return True
            inner = os.open(name, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = inner
    except OSError:
        return False
    finally:
        os.close(fd)
    return False
