"""S3 writes carry no flexible checksum by default: botocore's own default
(``request_checksum_calculation=when_supported``) streams every PutObject as ``aws-chunked`` with
a CRC32 trailer over https (a header over http), which stores without trailer support refuse
(Backblaze B2, older MinIO/Ceph). The PUT is captured by a recording proxy in front of moto."""

from __future__ import annotations

import pytest

from core.config import load_settings
from core.store import open_store
from iris_testing.fault_proxy import fault_proxy
from tests.fakes.s3 import moto_s3_fixture, s3_bucket_fixture, use_test_credentials  # noqa: F401

CHECKSUM_HEADERS = ("x-amz-trailer", "x-amz-sdk-checksum-algorithm", "x-amz-checksum-crc32",
                    "x-amz-decoded-content-length")


def put_through_proxy(moto_s3, s3_bucket, monkeypatch, **env: str):
    use_test_credentials(monkeypatch)
    with fault_proxy(moto_s3.endpoint_url) as proxy:
        for name, value in {"IRIS_OBJECTS_URL": f"s3://{s3_bucket}/iris",
                            "IRIS_S3_ENDPOINT_URL": proxy.url, "IRIS_S3_REGION": "us-east-1",
                            **env}.items():
            monkeypatch.setenv(name, value)
        store = open_store(load_settings())
        try:
            store.objects.put("u1", "notes/today.md", b"hello, store")
            assert store.objects.get("u1", "notes/today.md").data == b"hello, store"
        finally:
            store.close()
        (put,) = [(line, headers, body) for line, headers, body in proxy.requests()
                  if line.startswith("PUT ")]
    return put


def test_a_put_carries_no_flexible_checksum_by_default(moto_s3, s3_bucket, monkeypatch):
    line, headers, body = put_through_proxy(moto_s3, s3_bucket, monkeypatch)
    assert "/iris/users/u1/notes/today.md" in line
    assert "aws-chunked" not in headers.get("content-encoding", "")
    assert [h for h in CHECKSUM_HEADERS if h in headers] == []
    assert body == b"hello, store"  # the bytes as they are: no chunk framing, no trailer


def test_the_setting_reaches_botocore(moto_s3, s3_bucket, monkeypatch):
    """``when_supported`` (AWS' default) adds the CRC32 checksum: the test above can fail."""
    _, headers, _ = put_through_proxy(
        moto_s3, s3_bucket, monkeypatch, IRIS_S3_REQUEST_CHECKSUM_CALCULATION="when_supported",
        IRIS_S3_RESPONSE_CHECKSUM_VALIDATION="when_supported")
    assert headers.get("x-amz-sdk-checksum-algorithm") == "CRC32"


def test_an_unknown_checksum_mode_is_a_clear_configuration_error(monkeypatch):
    from core.errors import ConfigError

    monkeypatch.setenv("IRIS_S3_REQUEST_CHECKSUM_CALCULATION", "sometimes")
    with pytest.raises(ConfigError, match=r"IRIS_S3_REQUEST_CHECKSUM_CALCULATION: .*when_req"):
        load_settings()
