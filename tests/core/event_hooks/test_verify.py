"""Signature checks of event webhook deliveries (``core.event_hooks.verify``), on an explicit
clock. GitHub's scheme is checked against the test vector of GitHub's documentation
("Validating webhook deliveries": secret "It's a Secret to Everybody", body "Hello, World!")."""

from __future__ import annotations

import hashlib

import pytest

from core.event_hooks.verify import Forged, sign_generic, verify

GITHUB_SECRET = "It's a Secret to Everybody"
GITHUB_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
NOW = 1_800_000_000.0


def test_githubs_documented_vector_verifies_and_names_the_delivery():
    headers = {"x-hub-signature-256": GITHUB_SIGNATURE, "x-github-delivery": "72d3162e"}
    found = verify(headers, b"Hello, World!", GITHUB_SECRET, now=NOW, window=300)
    assert (found.scheme, found.delivery_id) == ("github", "72d3162e")


@pytest.mark.parametrize("headers, body", [
    ({"x-hub-signature-256": GITHUB_SIGNATURE}, b"Hello, World?"),  # body changed
    ({"x-hub-signature-256": GITHUB_SIGNATURE.replace("sha256", "sha1")}, b"Hello, World!"),
    ({"x-hub-signature-256": "sha256="}, b"Hello, World!"),
    ({}, b"Hello, World!"),  # unsigned
])
def test_a_changed_body_another_scheme_or_no_signature_is_forged(headers, body):
    with pytest.raises(Forged):
        verify(headers, body, GITHUB_SECRET, now=NOW, window=300)


def test_the_generic_scheme_signs_time_and_body_within_the_replay_window():
    body = b'{"alert": "disk full"}'
    header = sign_generic("s3cret", body, int(NOW) - 100)
    found = verify({"x-iris-signature": header, "x-iris-delivery": "a-1"}, body, "s3cret",
                   now=NOW, window=300)
    assert (found.scheme, found.delivery_id) == ("generic", "a-1")
    with pytest.raises(Forged, match="from now"):  # replayed later than the window
        verify({"x-iris-signature": header}, body, "s3cret", now=NOW + 300, window=300)
    with pytest.raises(Forged, match="does not match"):  # the stamp is signed too
        verify({"x-iris-signature": header.replace(f"t={int(NOW) - 100}", f"t={int(NOW)}")},
               body, "s3cret", now=NOW, window=300)
    with pytest.raises(Forged, match="does not match"):
        verify({"x-iris-signature": header}, body, "other", now=NOW, window=300)
    with pytest.raises(Forged):
        verify({"x-iris-signature": "v1=abc"}, body, "s3cret", now=NOW, window=300)


def test_a_rotated_secret_may_send_two_v1_values():
    body = b"x"
    old = sign_generic("old", body, int(NOW))
    new = sign_generic("new", body, int(NOW)).split(",")[1]
    verify({"x-iris-signature": f"{old},{new}"}, body, "new", now=NOW, window=300)


def test_without_a_delivery_id_the_body_hash_is_the_id():
    body = b"same"
    header = {"x-iris-signature": sign_generic("k", body, int(NOW))}
    found = verify(header, body, "k", now=NOW, window=300)
    assert found.delivery_id == "sha256:" + hashlib.sha256(body).hexdigest()
