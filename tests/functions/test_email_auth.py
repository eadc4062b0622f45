"""A sender cannot vouch for their own mail: the ``Authentication-Results`` a sender writes
(``attacker; dkim=pass``) never cancels the receiving service's verdict. Through the real
webhook (raw RFC 822 with the bearer secret, and Mailgun's ``body-mime``), with the default
(the topmost header, which the receiving service prepends) and with IRIS_EMAIL_AUTHSERV_ID."""

import pytest

from iris_testing.mail_inbound import RECEIVER, as_received, mailgun_form, raw_mail
from iris_testing.platform_stack import MAILGUN_KEY, platform_stack


def count(stack):
    return stack.rt.store.db.scalar("SELECT count(*) FROM inbox")


def spoofed(provider_says="spf=pass dkim=fail", sender_says="spf=pass dkim=pass dmarc=pass",
            sender_id="attacker.example"):
    """A mail whose sender added a passing verdict, as the receiving service hands it on."""
    return as_received(raw_mail("Wire the money.", auth=sender_says, authserv_id=sender_id),
                       provider_says)


def refused(stack, raw, reason):
    response = stack.email_post(raw)
    assert response.status_code == 406, response.text
    assert response.json()["reason"] == f"refused: {reason}"


@pytest.fixture
def stack(iris_home):
    with platform_stack(iris_home) as running:
        yield running


def test_a_sender_added_pass_does_not_cancel_the_providers_fail(stack):
    refused(stack, spoofed(), "DKIM check failed")
    refused(stack, spoofed(sender_id=RECEIVER), "DKIM check failed")  # even naming the provider
    refused(stack, spoofed("spf=fail smtp.mailfrom=example.com", "spf=pass"), "SPF check failed")
    # a result is read only where a clause opens: not from a property value the sender chose
    refused(stack, as_received(raw_mail("hi", auth=""), "spf=pass smtp.mailfrom="
                               "dkim=pass@evil.example; dkim=fail header.d=evil.example"),
            "DKIM check failed")
    # Mailgun's body-mime is the raw message too
    form = {**mailgun_form("Wire the money.", key=MAILGUN_KEY),
            "body-mime": spoofed().decode()}
    assert stack.mailgun_post(form).status_code == 406
    assert count(stack) == 0 and stack.mails() == []
    # the provider's pass stands whatever the sender claims below it
    passing = spoofed("spf=pass dkim=pass dmarc=pass", "dkim=fail dmarc=fail")
    assert stack.email_post(passing).json()["status"] == "recorded"
    stack.wait(stack.mails)
    assert count(stack) == 1


def test_with_the_authserv_id_set_only_that_services_headers_count(iris_home):
    with platform_stack(iris_home, IRIS_EMAIL_AUTHSERV_ID=RECEIVER) as stack:
        refused(stack, spoofed(), "DKIM check failed")
        refused(stack, raw_mail("hi", authserv_id="attacker.example"),
                f"no Authentication-Results from {RECEIVER}")
        refused(stack, raw_mail("hi", auth=""), f"no Authentication-Results from {RECEIVER}")
        assert count(stack) == 0 and stack.mails() == []
        # another service's verdict above it is ignored: its fail as much as its pass
        relayed = as_received(raw_mail("Lunch?"), "dkim=fail", authserv_id="relay.example.org")
        assert stack.email_post(relayed).json()["status"] == "recorded"
        stack.wait(stack.mails)
        assert count(stack) == 1
