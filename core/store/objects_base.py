"""What every object store backend shares: the interface, its errors, key and user-id rules,
and ETags (quoted MD5 of the content, as S3 reports them). ``core.store.objects`` opens a
backend; the backends (local, ``objects_s3``) import from here, never from each other."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

# botocore's request_checksum_calculation and response_checksum_validation (Settings
# s3_request_checksum_calculation / s3_response_checksum_validation)
CHECKSUMS_WHEN_REQUIRED = ("when_required", "when_required")

MAX_KEY_BYTES = 1024
MAX_USER_ID_CHARS = 128
RESERVED_SEGMENT_PREFIX = ".iris-tmp-"

_USER_ID = re.compile(r"[A-Za-z0-9_.:@-]+")
_BUCKET = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


class ObjectStoreError(Exception):
    """The object store could not do what was asked."""


class ObjectNotFound(ObjectStoreError):
    """The key does not exist for this user."""


class PreconditionFailed(ObjectStoreError):
    """A compare-and-set lost: the object changed, or exists when it should not."""


@dataclass(frozen=True)
class StoredObject:
    data: bytes
    etag: str


@runtime_checkable
class ObjectStore(Protocol):
    def get(self, user_id: str, key: str) -> StoredObject: ...

    def head(self, user_id: str, key: str) -> str | None: ...

    def put(
        self,
        user_id: str,
        key: str,
        data: bytes,
        *,
        if_match: str | None = None,
        if_none_match: bool = False,
    ) -> str: ...

    def delete(self, user_id: str, key: str, *, if_match: str | None = None) -> None: ...

    def list(self, user_id: str, prefix: str = "") -> list[str]: ...

    def describe(self) -> str: ...

    def check(self) -> None: ...


def validate_user_id(user_id: str) -> str:
    """Return ``user_id`` if it is safe as one path segment, else raise ValueError."""
    if not isinstance(user_id, str) or not _USER_ID.fullmatch(user_id):
        raise ValueError(f"invalid user id {user_id!r}: use letters, digits and _.:@-")
    if user_id == "." or ".." in user_id or len(user_id) > MAX_USER_ID_CHARS:
        raise ValueError(f"invalid user id {user_id!r}")
    return user_id


def validate_key(key: str) -> str:
    """Return ``key`` if it is a relative ``/``-separated object key, else raise ValueError."""
    if not isinstance(key, str) or not key:
        raise ValueError("object key must be a non-empty string")
    _check_chars(key, "object key")
    if key.startswith("/"):
        raise ValueError(f"object key must be relative: {key!r}")
    for segment in key.split("/"):
        _check_segment(segment, key)
    return key


def validate_prefix(prefix: str) -> str:
    """Return a list prefix: empty, or a key that may end with ``/`` or a partial segment."""
    if not isinstance(prefix, str):
        raise ValueError("list prefix must be a string")
    if prefix:
        validate_key(prefix.removesuffix("/"))
    return prefix


def _check_chars(text: str, what: str) -> None:
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise ValueError(f"{what} is not valid UTF-8: {text!r}") from None
    if size > MAX_KEY_BYTES:
        raise ValueError(f"{what} is longer than {MAX_KEY_BYTES} bytes")
    if "\x00" in text or "\\" in text:
        raise ValueError(f"{what} must not contain NUL or backslash: {text!r}")


def _check_segment(segment: str, key: str) -> None:
    if segment in ("", ".", ".."):
        raise ValueError(f"object key has an empty, '.' or '..' segment: {key!r}")
    if segment.startswith(RESERVED_SEGMENT_PREFIX):
        raise ValueError(f"object key segments must not start with {RESERVED_SEGMENT_PREFIX!r}")


def quote_etag(etag: str) -> str:
    """Return ``etag`` in its quoted form, whether or not it came quoted."""
    return f'"{etag.strip().strip(chr(34))}"'


def content_etag(data: bytes) -> str:
    return quote_etag(hashlib.md5(data, usedforsecurity=False).hexdigest())


def check_conditions(if_match: str | None, if_none_match: bool) -> None:
    if if_match is not None and if_none_match:
        raise ValueError("if_match and if_none_match cannot be combined")
    if if_match is not None and not if_match.strip().strip('"'):
        raise ValueError("if_match must be a non-empty etag")
