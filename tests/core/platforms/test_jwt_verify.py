"""The bearer-JWT check of Teams and Google Chat (core/platforms/jwt_verify.py) on its own: keys
served over real HTTP by the fake Bot Framework (iris_testing/teams_api.py), times on a
ManualClock."""

import asyncio
import base64
import hashlib
import hmac
import json

import jwt
import pytest
from cryptography.hazmat.primitives import serialization

from core.clock import ManualClock
from core.platforms.jwt_verify import KeySet, TokenRejected, bearer, verify
from iris_testing.server import serve
from iris_testing.teams_api import ISSUER, FakeTeams

NOW = 1_800_000_000.0


@pytest.fixture
def served():
    teams = FakeTeams()
    with serve(teams.app) as server:
        teams.url = server.url
        clock = ManualClock(NOW)
        keys = KeySet(clock=clock, metadata_url=f"{server.url}/v1/.well-known/openidconfiguration")
        yield teams, keys, clock


def check(teams, keys, token, leeway=300.0):
    return asyncio.run(verify(token, keys, issuers=(ISSUER,), audiences=(teams.app_id,),
                              leeway=leeway))


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def test_a_good_token_gives_its_claims_and_the_endorsing_key(served):
    teams, keys, _ = served
    verified = check(teams, keys, teams.token(now=NOW))
    assert verified.claims["serviceurl"] == teams.service_url
    assert "msteams" in verified.key["endorsements"]


def test_expiry_and_not_before_follow_the_clock_with_the_leeway(served):
    teams, keys, clock = served
    token = teams.token(now=NOW, lifetime=600)  # nbf NOW-5, exp NOW+600
    clock.set(NOW + 600 + 300)
    assert check(teams, keys, token).claims["exp"] == int(NOW + 600)
    clock.set(NOW + 600 + 301)
    with pytest.raises(TokenRejected, match="expired"):
        check(teams, keys, token)
    clock.set(NOW - 5 - 301)
    with pytest.raises(TokenRejected, match="not valid yet"):
        check(teams, keys, token)


def test_a_token_without_expiry_is_refused(served):
    teams, keys, _ = served
    kid, key = teams._keys[-1]
    token = jwt.encode({"iss": ISSUER, "aud": teams.app_id}, key, algorithm="RS256",
                       headers={"kid": kid})
    with pytest.raises(TokenRejected, match="no expiry"):
        check(teams, keys, token)


def test_hmac_keyed_with_the_public_key_is_refused(served):
    """The RS/HS confusion: an HS256 token whose secret is the published public key."""
    teams, keys, _ = served
    kid, key = teams._keys[-1]
    pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                        serialization.PublicFormat.SubjectPublicKeyInfo)
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": kid}).encode())
    payload = b64(json.dumps({"iss": ISSUER, "aud": teams.app_id, "exp": NOW + 600,
                              "serviceurl": teams.service_url}).encode())
    signature = b64(hmac.new(pem, f"{header}.{payload}".encode(), hashlib.sha256).digest())
    with pytest.raises(TokenRejected, match="HS256"):
        check(teams, keys, f"{header}.{payload}.{signature}")


def test_a_known_kid_signed_by_another_key_is_refused(served):
    teams, keys, _ = served
    kid, _ = teams._keys[-1]
    other = FakeTeams()
    with pytest.raises(TokenRejected, match="signature"):
        check(teams, keys, other.token(now=NOW, kid=kid))


def test_bearer_needs_the_scheme_and_a_bounded_token():
    assert bearer("Bearer abc") == "abc"
    for header in (None, "", "Basic abc", "Bearer ", "Bearer " + "a" * 20_000):
        with pytest.raises(TokenRejected):
            bearer(header)


def test_a_key_server_that_is_down_or_not_json_refuses_the_token():
    clock = ManualClock(NOW)
    teams = FakeTeams()
    down = KeySet(clock=clock, jwks_url="http://127.0.0.1:9/keys")
    with pytest.raises(TokenRejected, match="could not fetch"):
        asyncio.run(verify(teams.token(now=NOW), down, issuers=(ISSUER,),
                           audiences=(teams.app_id,), leeway=0))
    with serve(teams.app) as server:
        teams.url = server.url
        not_json = KeySet(clock=clock, metadata_url=f"{server.url}/teams/v3/conversations/x/"
                          "activities")  # a 405 page
        with pytest.raises(TokenRejected, match="could not fetch"):
            asyncio.run(verify(teams.token(now=NOW), not_json, issuers=(ISSUER,),
                               audiences=(teams.app_id,), leeway=0))
