"""The S3 store behind iris_testing/fault_proxy.py (moto over HTTP): 503s are retried, and a
conditional put whose answer was lost after it landed counts as written, while a real conflict
is still a conflict."""

from __future__ import annotations

import pytest

from core.store.objects_base import ObjectStoreError, PreconditionFailed
from core.store.objects_s3 import S3ObjectStore
from iris_testing.fault_proxy import ProxyRule, fault_proxy
from tests.fakes.s3 import moto_s3_fixture, s3_bucket_fixture  # noqa: F401


@pytest.fixture
def proxied(moto_s3, s3_bucket):
    with fault_proxy(moto_s3.endpoint_url) as proxy:
        yield proxy, S3ObjectStore(s3_bucket, endpoint_url=proxy.url, region="us-east-1",
                                   read_timeout=1)


def test_503s_are_retried(proxied):
    proxy, store = proxied
    proxy.inject(ProxyRule("fail", match="^PUT ", times=2))
    store.put("usr_1", "a", b"x")
    assert store.get("usr_1", "a").data == b"x"
    assert proxy.counts()["fail"] == 2


def test_a_503_that_outlasts_the_retries_is_an_error(proxied):
    proxy, store = proxied
    proxy.inject(ProxyRule("fail", match="^PUT "))
    with pytest.raises(ObjectStoreError, match="SlowDown"):
        store.put("usr_1", "a", b"x")


@pytest.mark.parametrize("condition", ["if_none_match", "if_match"])
def test_a_conditional_put_whose_answer_was_lost_is_ours(proxied, condition):
    proxy, store = proxied
    old = store.put("usr_1", "a", b"old")
    if condition == "if_none_match":
        store.delete("usr_1", "a")
    args = {"if_none_match": True} if condition == "if_none_match" else {"if_match": old}
    proxy.inject(ProxyRule("hang_after", match="^PUT ", times=1))  # it ran; no answer came
    etag = store.put("usr_1", "a", b"new", **args)  # boto3 retries; the retry's condition fails
    assert proxy.counts()["hang_after"] == 1
    assert store.get("usr_1", "a").etag == etag and store.get("usr_1", "a").data == b"new"


def test_a_real_conflict_after_a_lost_answer_is_still_a_conflict(proxied):
    proxy, store = proxied
    store.put("usr_1", "a", b"someone else's")
    proxy.inject(ProxyRule("drop_before", match="^PUT ", times=1))  # retried, then 412
    with pytest.raises(PreconditionFailed):
        store.put("usr_1", "a", b"mine", if_none_match=True)
    assert store.get("usr_1", "a").data == b"someone else's"
