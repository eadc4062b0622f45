"""Per-user object storage: a local directory in the emulator, S3 (or R2, moto) in the cloud.

Every object lives at ``<root or prefix>/users/<user_id>/<key>`` and every call names its user,
so one user's keys can never reach another's.

ETags are always returned the way S3 returns them: a double-quoted string such as
``"9dd4e461268c8034f5c8564e155c67a6"``. The local backend uses the MD5 hex digest of the
content, which is also what S3 reports for a single-part upload, so the same bytes get the same
ETag in both backends. ``if_match`` accepts an ETag with or without its quotes. Because an
ETag names content, not a version, a write of unchanged bytes leaves the ETag as it was and
does not invalidate other writers holding it (S3 behaves the same way).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlsplit

from core.store.objects_base import (
    _BUCKET,
    CHECKSUMS_WHEN_REQUIRED,
    MAX_KEY_BYTES,
    MAX_USER_ID_CHARS,
    RESERVED_SEGMENT_PREFIX,
    ObjectNotFound,
    ObjectStore,
    ObjectStoreError,
    PreconditionFailed,
    StoredObject,
    check_conditions,
    content_etag,
    quote_etag,
    validate_key,
    validate_prefix,
    validate_user_id,
)

__all__ = [
    "MAX_KEY_BYTES",
    "MAX_USER_ID_CHARS",
    "RESERVED_SEGMENT_PREFIX",
    "LocalObjectStore",
    "ObjectNotFound",
    "ObjectStore",
    "ObjectStoreError",
    "PreconditionFailed",
    "StoredObject",
    "check_conditions",
    "content_etag",
    "open_object_store",
    "quote_etag",
    "validate_key",
    "validate_prefix",
    "validate_user_id",
]


_THREAD_LOCKS: dict[str, threading.Lock] = {}
_THREAD_LOCKS_GUARD = threading.Lock()


def _thread_lock(name: str) -> threading.Lock:
    with _THREAD_LOCKS_GUARD:
        return _THREAD_LOCKS.setdefault(name, threading.Lock())


class LocalObjectStore:
    """Objects as files under ``root``.

    Writes go to a temporary file in the target directory and are renamed into place, so a
    reader sees the old bytes or the new ones, never a mix. Writes and deletes for one user are
    serialised by a thread lock plus an ``fcntl.flock`` on ``root/locks/<user_id>.lock``, which
    makes compare-and-set hold across threads and processes on one machine (not across machines
    sharing a network filesystem). Key segments starting with ``.iris-tmp-`` are reserved for
    those temporary files. Unlike S3, a key cannot also be a prefix of other keys (``a`` and
    ``a/b`` cannot both exist); such a put raises ObjectStoreError.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(os.path.abspath(root))

    def describe(self) -> str:
        return f"local:{self.root}"

    def check(self) -> None:
        try:
            for directory in (self.root / "users", self.root / "locks"):
                directory.mkdir(parents=True, exist_ok=True)
            fd, probe = tempfile.mkstemp(dir=self.root, prefix=RESERVED_SEGMENT_PREFIX)
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            raise ObjectStoreError(f"local object store {self.root} is not usable: {exc}") from exc

    def get(self, user_id: str, key: str) -> StoredObject:
        path = self._path(user_id, key)
        try:
            data = path.read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise ObjectNotFound(f"no object {key!r} for user {user_id!r}") from None
        except OSError as exc:
            raise ObjectStoreError(f"cannot read {key!r}: {exc}") from exc
        return StoredObject(data=data, etag=content_etag(data))

    def head(self, user_id: str, key: str) -> str | None:
        return self._current_etag(self._path(user_id, key))

    def put(
        self,
        user_id: str,
        key: str,
        data: bytes,
        *,
        if_match: str | None = None,
        if_none_match: bool = False,
    ) -> str:
        check_conditions(if_match, if_none_match)
        path = self._path(user_id, key)
        data = bytes(data)
        with self._locked(user_id):
            if if_match is not None or if_none_match:
                current = self._current_etag(path)
                if if_none_match and current is not None:
                    raise PreconditionFailed(f"{key!r} already exists for user {user_id!r}")
                if if_match is not None and current != quote_etag(if_match):
                    raise PreconditionFailed(f"{key!r} changed since etag {if_match}")
            self._write(path, data, key)
        return content_etag(data)

    def delete(self, user_id: str, key: str, *, if_match: str | None = None) -> None:
        check_conditions(if_match, False)
        path = self._path(user_id, key)
        with self._locked(user_id):
            current = self._current_etag(path)
            if current is None:
                raise ObjectNotFound(f"no object {key!r} for user {user_id!r}")
            if if_match is not None and current != quote_etag(if_match):
                raise PreconditionFailed(f"{key!r} changed since etag {if_match}")
            try:
                path.unlink()
            except OSError as exc:
                raise ObjectStoreError(f"cannot delete {key!r}: {exc}") from exc
            self._prune(path.parent, self._user_dir(user_id))

    def list(self, user_id: str, prefix: str = "") -> list[str]:
        user_dir = self._user_dir(user_id)
        validate_prefix(prefix)
        start = user_dir.joinpath(prefix.rpartition("/")[0])
        if not start.resolve().is_relative_to(user_dir.resolve()):
            return []
        keys = []
        for dirpath, _dirnames, filenames in os.walk(start):
            for name in filenames:
                if name.startswith(RESERVED_SEGMENT_PREFIX):
                    continue
                full = Path(dirpath, name)
                key = full.relative_to(user_dir).as_posix()
                if key.startswith(prefix) and not full.is_symlink():
                    keys.append(key)
        return sorted(keys)

    def _user_dir(self, user_id: str) -> Path:
        return self.root / "users" / validate_user_id(user_id)

    def _path(self, user_id: str, key: str) -> Path:
        user_dir = self._user_dir(user_id)
        path = user_dir.joinpath(*validate_key(key).split("/"))
        if not path.resolve().is_relative_to(user_dir.resolve()):
            raise ValueError(f"object key {key!r} resolves outside the user's directory")
        return path

    @staticmethod
    def _current_etag(path: Path) -> str | None:
        try:
            return content_etag(path.read_bytes())
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None

    @contextlib.contextmanager
    def _locked(self, user_id: str) -> Iterator[None]:
        lock_path = self.root / "locks" / f"{user_id}.lock"
        with _thread_lock(str(lock_path)):
            lock_path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)

    @staticmethod
    def _write(path: Path, data: bytes, key: str) -> None:
        tmp = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=RESERVED_SEGMENT_PREFIX)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except OSError as exc:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            if isinstance(exc, FileExistsError | NotADirectoryError):
                reason = "one of its parents is itself a key"
            elif isinstance(exc, IsADirectoryError):
                reason = "it is a prefix of other keys"
            else:
                reason = str(exc)
            raise ObjectStoreError(f"cannot store {key!r}: {reason}") from exc

    @staticmethod
    def _prune(directory: Path, user_dir: Path) -> None:
        while directory != user_dir and directory.is_relative_to(user_dir):
            try:
                directory.rmdir()
            except OSError:
                return
            directory = directory.parent


def open_object_store(
    url: str, *, s3_endpoint_url: str | None = None, s3_region: str | None = None,
    s3_timeout: float = 60.0, s3_checksums: tuple[str, str] = CHECKSUMS_WHEN_REQUIRED,
) -> ObjectStore:
    """Open the store at ``url``: an absolute path, ``file:///path`` or ``s3://bucket[/prefix]``.

    Opening does no I/O; call ``check()`` to find out whether the store is usable.
    ``s3_checksums``: botocore's ``request_checksum_calculation`` and
    ``response_checksum_validation``.
    """
    if not isinstance(url, str) or not url.strip():
        raise ValueError("object store URL is empty: use an absolute path or s3://bucket[/prefix]")
    if url.startswith("s3://"):
        bucket, prefix = _parse_s3_url(url)
        from core.store.objects_s3 import S3ObjectStore

        return S3ObjectStore(bucket, prefix, endpoint_url=s3_endpoint_url, region=s3_region,
                             read_timeout=s3_timeout, checksums=s3_checksums)
    if url.startswith("file:"):
        return LocalObjectStore(_parse_file_url(url))
    if "://" in url:
        raise ValueError(
            f"unsupported object store URL {url!r}: use an absolute path, file:///path "
            "or s3://bucket[/prefix]"
        )
    if not os.path.isabs(url):
        raise ValueError(f"local object store path must be absolute: {url!r}")
    return LocalObjectStore(url)


def _parse_s3_url(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    if parts.query or parts.fragment or not _BUCKET.fullmatch(parts.netloc):
        raise ValueError(f"invalid S3 URL {url!r}: expected s3://bucket[/prefix]")
    path = parts.path.strip("/")
    if not path:
        return parts.netloc, ""
    try:
        validate_key(path)
    except ValueError as exc:
        raise ValueError(f"invalid prefix in S3 URL {url!r}: {exc}") from None
    return parts.netloc, f"{path}/"


def _parse_file_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost") or parts.query or parts.fragment:
        raise ValueError(f"invalid file URL {url!r}: expected file:///absolute/path")
    path = unquote(parts.path)
    if not os.path.isabs(path):
        raise ValueError(f"invalid file URL {url!r}: expected file:///absolute/path")
    return path
