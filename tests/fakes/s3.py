"""An S3 endpoint for tests: moto's server on a loopback port, reached over real HTTP.

Use the fixtures by importing them into a test module (or a conftest)::

    from tests.fakes.s3 import moto_s3_fixture, s3_bucket_fixture  # noqa: F401

``moto_s3`` is one server per session; ``s3_bucket`` is a fresh, empty bucket per test, with
throwaway credentials in the environment so boto3's default chain finds them.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

ACCESS_KEY_ID = "iris-test-key"
SECRET_ACCESS_KEY = "iris-test-secret"
REGION = "us-east-1"


@dataclass
class MotoS3:
    endpoint_url: str
    region: str = REGION
    _client: Any = field(default=None, repr=False)

    def client(self) -> Any:
        """A boto3 client with the test keys, made once (boto3 clients are thread-safe)."""
        if self._client is None:
            import boto3

            self._client = boto3.session.Session().client(
                "s3",
                endpoint_url=self.endpoint_url,
                region_name=self.region,
                aws_access_key_id=ACCESS_KEY_ID,
                aws_secret_access_key=SECRET_ACCESS_KEY,
            )
        return self._client

    def create_bucket(self) -> str:
        name = f"iris-test-{uuid.uuid4().hex[:16]}"
        self.client().create_bucket(Bucket=name)
        return name


@contextmanager
def running_moto_s3() -> Iterator[MotoS3]:
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        yield MotoS3(endpoint_url=f"http://{host}:{port}")
    finally:
        server.stop()


def use_test_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Point boto3's default chain at throwaway keys and nothing else on this machine."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_ACCESS_KEY)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/iris-aws-config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/iris-aws-credentials")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture(scope="session", name="moto_s3")
def moto_s3_fixture() -> Iterator[MotoS3]:
    with running_moto_s3() as moto_s3:
        yield moto_s3


@pytest.fixture(name="s3_bucket")
def s3_bucket_fixture(moto_s3: MotoS3, monkeypatch: pytest.MonkeyPatch) -> str:
    use_test_credentials(monkeypatch)
    return moto_s3.create_bucket()
