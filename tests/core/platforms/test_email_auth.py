"""Reading Authentication-Results (RFC 8601 section 2.2) and choosing whose to believe."""

import pytest

from core.platforms.email_auth import auth_failure, parse_auth_results

GMAIL = ("mx.google.com; dkim=pass header.i=@example.com header.s=s1 header.b=Ab12; "
         "spf=pass (google.com: domain of a@example.com designates 192.0.2.1 as permitted "
         "sender) smtp.mailfrom=a@example.com; dmarc=pass (p=NONE sp=NONE dis=NONE) "
         "header.from=example.com")


def test_a_providers_header_is_read_clause_by_clause():
    parsed = parse_auth_results(GMAIL)
    assert parsed.authserv_id == "mx.google.com"
    assert parsed.results == (("dkim", "pass"), ("spf", "pass"), ("dmarc", "pass"))
    assert parse_auth_results("example.org 1; none").results == ()
    assert parse_auth_results('"Quoted.Example"; spf=fail').authserv_id == "quoted.example"
    assert parse_auth_results("mx; dkim/1=fail").results == (("dkim", "fail"),)


@pytest.mark.parametrize("value", [
    "mx; dkim=fail (dkim=pass in a comment (nested; dkim=pass))",
    'mx; dkim=fail reason="seemed like dkim=pass; really"',
    "mx; dkim=fail header.d=dkim=pass.example",
    "mx; spf=pass smtp.mailfrom=dkim=pass@evil.example; dkim=fail header.d=evil.example",
])
def test_words_the_sender_chose_never_read_as_a_result(value):
    assert auth_failure([value]) == "DKIM check failed"


def test_only_the_topmost_header_counts_by_default():
    provider, sender = "mx.example.net; spf=pass; dkim=fail", "attacker; dkim=pass"
    assert auth_failure([provider, sender]) == "DKIM check failed"
    assert auth_failure(["mx.example.net; dkim=pass", "attacker; dkim=fail"]) is None
    assert auth_failure([]) is None


def test_with_an_authserv_id_only_its_headers_count():
    headers = ["relay.example.org; dkim=fail", "mx.example.net; spf=pass",
               "mx.example.net; dkim=fail; dkim=pass", "attacker; dmarc=fail"]
    assert auth_failure(headers, "MX.example.net") is None
    assert auth_failure(headers[:1], "mx.example.net") == (
        "no Authentication-Results from mx.example.net")
    assert auth_failure(["mx.example.net; spf=softfail"], "mx.example.net") == "SPF check failed"
    assert auth_failure(["mx.example.net; dmarc=fail"], "mx.example.net") == "DMARC check failed"
