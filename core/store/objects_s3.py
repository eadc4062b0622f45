"""The S3 backend of the object store: AWS, R2, moto, or any S3-compatible endpoint.

boto3 is imported on the first request, not when this module is imported, so code that only
opens a store (or never touches it) does not pay for the import.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar, cast

from core.store.objects_base import (
    CHECKSUMS_WHEN_REQUIRED,
    ObjectNotFound,
    ObjectStoreError,
    PreconditionFailed,
    StoredObject,
    check_conditions,
    quote_etag,
    validate_key,
    validate_prefix,
    validate_user_id,
)

T = TypeVar("T")

_CONDITION_LOST = {"PreconditionFailed", "ConditionalRequestConflict"}
_KEY_MISSING = {"NoSuchKey", "404", "NotFound"}


class S3ObjectStore:
    """Objects under ``s3://bucket/<prefix>users/<user_id>/<key>``.

    Compare-and-set uses S3 conditional requests: ``If-Match`` / ``If-None-Match: *`` on
    PutObject and ``If-Match`` on DeleteObject (AWS general purpose buckets since 2025, moto
    5.2.5). On an endpoint that ignores ``If-Match`` on DeleteObject, a conditional delete
    would delete unconditionally. An unconditional delete first checks that the key exists
    (S3 itself answers 204 for a missing key), so a concurrent delete between that check and
    ours goes unreported. ``head`` returns None both for a missing key and a missing bucket;
    ``check`` tells them apart. Credentials come from boto3's usual chain.
    """

    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        *,
        endpoint_url: str | None = None,
        region: str | None = None,
        list_page_size: int = 1000,
        read_timeout: float = 60.0,
        checksums: tuple[str, str] = CHECKSUMS_WHEN_REQUIRED,
    ) -> None:
        self.bucket = bucket
        self.prefix = prefix
        self.endpoint_url = endpoint_url
        self.region = region
        self.list_page_size = list_page_size
        self.read_timeout = read_timeout
        self.checksums = checksums
        self._client: Any = None
        self._client_lock = threading.Lock()

    def describe(self) -> str:
        where = f"s3://{self.bucket}/{self.prefix}".rstrip("/")
        details = [f"endpoint {self.endpoint_url}"] if self.endpoint_url else []
        if self.region:
            details.append(f"region {self.region}")
        return f"{where} ({', '.join(details)})" if details else where

    def check(self) -> None:
        """List one key under the store's prefix: proves the bucket, credentials and access."""
        self._call(
            "check",
            lambda s3: s3.list_objects_v2(Bucket=self.bucket, Prefix=self.prefix, MaxKeys=1),
        )

    def get(self, user_id: str, key: str) -> StoredObject:
        name = self._name(user_id, key)

        def fetch(s3: Any) -> StoredObject:
            response = s3.get_object(Bucket=self.bucket, Key=name)
            return StoredObject(data=response["Body"].read(), etag=response["ETag"])

        return self._call(f"get {key!r}", fetch)

    def head(self, user_id: str, key: str) -> str | None:
        name = self._name(user_id, key)
        try:
            response = self._call(
                f"head {key!r}", lambda s3: s3.head_object(Bucket=self.bucket, Key=name)
            )
        except ObjectNotFound:
            return None
        return cast("str | None", response["ETag"])

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
        args: dict[str, Any] = {"Bucket": self.bucket, "Key": self._name(user_id, key)}
        if if_match is not None:
            args["IfMatch"] = quote_etag(if_match)
        if if_none_match:
            args["IfNoneMatch"] = "*"
        try:
            response = self._call(
                f"put {key!r}", lambda s3: s3.put_object(Body=bytes(data), **args)
            )
        except ObjectNotFound:
            raise PreconditionFailed(f"{key!r} does not exist for user {user_id!r}") from None
        except PreconditionFailed as exc:
            etag = self._own_earlier_attempt(user_id, key, data, exc)
            if etag is None:
                raise
            return etag
        return cast("str", response["ETag"])

    def _own_earlier_attempt(
        self, user_id: str, key: str, data: bytes, exc: PreconditionFailed
    ) -> str | None:
        """boto3 retried the conditional put (a timeout or a dropped answer) and the retry's
        condition failed: when the object now holds our bytes, the earlier attempt landed and
        this write succeeded. Returns its ETag, or None when it really lost."""
        response = getattr(exc.__cause__, "response", None) or {}
        if not response.get("ResponseMetadata", {}).get("RetryAttempts"):
            return None
        try:
            current = self.get(user_id, key)
        except ObjectNotFound:
            return None
        return current.etag if current.data == bytes(data) else None

    def delete(self, user_id: str, key: str, *, if_match: str | None = None) -> None:
        check_conditions(if_match, False)
        args: dict[str, Any] = {"Bucket": self.bucket, "Key": self._name(user_id, key)}
        if if_match is not None:
            args["IfMatch"] = quote_etag(if_match)
        elif self.head(user_id, key) is None:
            raise ObjectNotFound(f"no object {key!r} for user {user_id!r}")
        self._call(f"delete {key!r}", lambda s3: s3.delete_object(**args))

    def list(self, user_id: str, prefix: str = "") -> list[str]:
        root = self._user_root(user_id)
        validate_prefix(prefix)

        def collect(s3: Any) -> list[str]:
            pages = s3.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket,
                Prefix=root + prefix,
                PaginationConfig={"PageSize": self.list_page_size},
            )
            return [item["Key"][len(root) :] for page in pages for item in page.get("Contents", [])]

        return sorted(self._call("list", collect))

    def _user_root(self, user_id: str) -> str:
        return f"{self.prefix}users/{validate_user_id(user_id)}/"

    def _name(self, user_id: str, key: str) -> str:
        return self._user_root(user_id) + validate_key(key)

    def _s3(self) -> Any:
        with self._client_lock:
            if self._client is None:
                self._client = _new_client(self.endpoint_url, self.region, self.read_timeout,
                                           self.checksums)
            return self._client

    def _call(self, action: str, request: Callable[[Any], T]) -> T:
        from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

        try:
            return request(self._s3())
        except ClientError as exc:
            raise self._translate(action, exc) from exc
        except NoCredentialsError as exc:
            raise ObjectStoreError(
                f"no AWS credentials for {self.describe()}: set AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY, or configure a profile"
            ) from exc
        except BotoCoreError as exc:
            raise ObjectStoreError(f"S3 {action} failed on {self.describe()}: {exc}") from exc

    def _translate(self, action: str, exc: Any) -> ObjectStoreError:
        error = exc.response.get("Error", {})
        code = str(error.get("Code", ""))
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        where = self.describe()
        if code in _CONDITION_LOST or status == 412:
            return PreconditionFailed(f"S3 {action}: precondition failed ({code or status})")
        if code == "NoSuchBucket":
            return ObjectStoreError(f"S3 bucket {self.bucket!r} does not exist ({where})")
        if code in _KEY_MISSING and action != "check":
            return ObjectNotFound(f"S3 {action}: no such key")
        if code in ("AccessDenied", "403", "Forbidden") or status == 403:
            return ObjectStoreError(
                f"S3 {action} denied on {where}: check the credentials and their permissions"
            )
        message = error.get("Message") or str(exc)
        return ObjectStoreError(f"S3 {action} failed on {where}: {code or status} {message}")


_LOADER_LOCK = threading.Lock()
_LOADER: Any = None


def _new_client(endpoint_url: str | None, region: str | None, read_timeout: float,
                checksums: tuple[str, str] = CHECKSUMS_WHEN_REQUIRED) -> Any:
    """A client with its own session and credentials, sharing parsed service models.

    Checksums are only those an operation requires by default (``when_required``): botocore's
    own default, ``when_supported``, streams every PutObject as ``aws-chunked`` with a CRC32
    trailer, which AWS and moto accept and stores without trailer support (Backblaze B2,
    older MinIO and Ceph) refuse. ``Content-MD5``-style integrity is kept where S3 requires it."""
    import boto3
    import botocore.session
    from botocore.config import Config

    global _LOADER
    with _LOADER_LOCK:
        core = botocore.session.Session()
        if _LOADER is None:
            _LOADER = core.get_component("data_loader")
        core.register_component("data_loader", _LOADER)
        config = Config(
            connect_timeout=5,
            read_timeout=read_timeout,
            retries={"max_attempts": 3, "mode": "standard"},
            max_pool_connections=32,
            request_checksum_calculation=checksums[0],
            response_checksum_validation=checksums[1],
        )
        return boto3.session.Session(botocore_session=core).client(
            "s3", endpoint_url=endpoint_url, region_name=region, config=config
        )
