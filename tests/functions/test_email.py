"""Email through real HTTP and real SMTP: raw RFC 822 and Mailgun-signed posts → Iris → worker
→ smtplib → an aiosmtpd server on loopback (iris_testing/smtp_server.py)."""

import asyncio
import time
from datetime import timedelta

import pytest

from core.clock import ManualClock
from core.contracts.senders import DeliveryFailed
from core.platforms.email_inbound import strip_reply
from core.platforms.mail import EmailSender, parse_smtp_url
from functions import cron
from iris_testing.mail_inbound import header_ids, mailgun_form, new_message_id, raw_mail
from iris_testing.platform_stack import MAILGUN_KEY, platform_stack
from iris_testing.smtp_server import MailServer
from tests.clocks import NOW
from tests.core.scheduler.cron_helpers import make_job


@pytest.fixture
def stack(iris_home):
    with platform_stack(iris_home) as running:
        yield running


def count(stack, table="inbox"):
    return stack.rt.store.db.scalar(f"SELECT count(*) FROM {table}")


def test_a_mail_is_answered_in_its_thread_with_text_and_html(stack):
    first = new_message_id()
    response = stack.email_post(raw_mail("Can you **summarise** this?", message_id=first))
    assert response.status_code == 200 and response.json()["status"] == "recorded"
    stack.wait(stack.mails)
    (reply,) = stack.mails()
    assert reply["To"] == "ada@example.com" and reply["Subject"] == "Re: Hello Iris"
    assert header_ids(reply, "In-Reply-To") == [first]
    assert header_ids(reply, "References") == [first]
    plain = reply.get_body(preferencelist=("plain",)).get_content()
    html = reply.get_body(preferencelist=("html",)).get_content()
    assert plain.replace("\r\n", "\n").strip() == (
        "re: Subject: Hello Iris\n\nCan you **summarise** this?")
    assert "<strong>summarise</strong>" in html
    assert stack.mail.envelopes[0] == ("iris@iris.example.net", ["ada@example.com"])


def test_a_reply_continues_the_thread_without_its_quoted_history(stack):
    first = new_message_id()
    stack.email_post(raw_mail("First question", message_id=first))
    stack.wait(stack.mails)
    iris_id = header_ids(stack.mails()[0], "Message-ID")[0]
    follow = raw_mail("And a second one?\n\n-- \nAda\n\nOn Mon, Iris wrote:\n> re: First",
                      subject="Re: Hello Iris", in_reply_to=iris_id,
                      references=[first, iris_id])
    stack.email_post(follow)
    stack.wait(lambda: len(stack.mails()) == 2)
    stack.wait(stack.settled)
    assert stack.model.seen[-1] == "And a second one?"
    chats = {r["chat_key"] for r in stack.rt.store.db.query("SELECT chat_key FROM inbox")}
    assert len(chats) == 1  # one thread, one conversation
    second = stack.mails()[1]
    assert header_ids(second, "References") == [first, iris_id, header_ids(
        second, "In-Reply-To")[0]]
    # a client that keeps only In-Reply-To still lands in the thread (Iris' id names it)
    stack.email_post(raw_mail("Third", subject="Re: x", in_reply_to=header_ids(
        second, "Message-ID")[0]))
    stack.wait(lambda: len(stack.mails()) == 3)
    assert len({r["chat_key"] for r in stack.rt.store.db.query(
        "SELECT chat_key FROM inbox")}) == 1


def test_a_wrong_secret_or_forged_mailgun_signature_is_refused_and_stores_nothing(stack):
    raw = raw_mail("hello")
    assert stack.email_post(raw, secret="wrong").status_code == 401
    assert stack.email_post(raw, secret=None).status_code == 401
    forged = mailgun_form("hello", key="not-the-key")
    assert stack.mailgun_post(forged).status_code == 401
    stale = mailgun_form("hello", key=MAILGUN_KEY, timestamp=int(time.time()) - 900)
    assert stack.mailgun_post(stale).status_code == 401
    assert count(stack) == 0 and count(stack, "users") == 0


def test_mail_failing_spf_or_dkim_is_refused(stack):
    assert stack.email_post(raw_mail("hi", auth="spf=fail smtp.mailfrom=example.com")
                            ).status_code == 406
    assert stack.email_post(raw_mail("hi", auth="spf=pass dkim=fail")).status_code == 406
    assert stack.mailgun_post(mailgun_form("hi", key=MAILGUN_KEY, dkim="Fail")
                              ).status_code == 406
    assert count(stack) == 0 and stack.mails() == []


def test_auto_replies_and_iris_own_mail_are_never_answered(stack):
    auto = raw_mail("I am out of office").replace(
        b"Subject:", b"Auto-Submitted: auto-replied\r\nSubject:", 1)
    assert stack.email_post(auto).json()["status"] == "ignored"
    own = raw_mail("loop?", sender="Iris <iris@iris.example.net>")
    assert stack.email_post(own).json()["status"] == "ignored"
    assert count(stack) == 0 and stack.mails() == []


def test_a_mailgun_post_is_answered_and_a_redelivery_is_a_no_op(stack):
    form = mailgun_form("Quoted junk stripped by Mailgun", key=MAILGUN_KEY,
                        stripped="Just this, please")
    for multipart in (False, True, False):
        assert stack.mailgun_post(form, multipart=multipart).status_code == 200
    stack.wait(stack.settled)
    stack.wait(stack.mails)
    assert stack.model.seen == ["Subject: Hello Iris\n\nJust this, please"]
    assert len(stack.mails()) == 1


def test_a_raw_redelivery_sends_one_reply(stack):
    raw = raw_mail("only once")
    for _ in range(3):
        assert stack.email_post(raw).status_code == 200
    stack.wait(stack.settled)
    stack.wait(stack.mails)
    assert len(stack.mails()) == 1 and len(stack.model.seen) == 1


def test_a_stranger_is_mailed_a_pairing_code(iris_home):
    with platform_stack(iris_home, IRIS_EMAIL_ACCESS="pairing") as s:
        assert s.email_post(raw_mail("hello?")).json()["status"] == "denied"
        s.wait(s.mails)
        body = s.mails()[0].get_body(preferencelist=("plain",)).get_content()
        assert "pairing code" in body.lower()
        assert count(s) == 0 and s.model.seen == []


def test_a_temporary_smtp_failure_is_retried_and_sent_once(stack):
    stack.mail.fail_next()
    stack.email_post(raw_mail("hello"))
    stack.wait(lambda: stack.rt.store.db.scalar(
        "SELECT count(*) FROM deliveries WHERE last_error IS NOT NULL AND claimed_by IS NULL"))
    assert "451" in stack.rt.store.db.scalar("SELECT last_error FROM deliveries")
    stack.rt.store.db.execute("UPDATE deliveries SET next_attempt_at = 0")
    asyncio.run(stack.rt.delivery.sweep())
    asyncio.run(stack.rt.delivery.sweep())
    assert len(stack.mails()) == 1


def test_a_cron_job_mails_its_result_into_the_thread(iris_home):
    clock = ManualClock(NOW)
    with platform_stack(iris_home, clock=clock) as s:
        first = new_message_id()
        s.email_post(raw_mail("hi", message_id=first))
        s.wait(s.mails)
        s.wait(s.settled)
        make_job(s.rt.store, s.rt.settings, schedule="every 1h", at=NOW,
                 account="email:ada@example.com", prompt="say hi", deliver="email",
                 name="greeter")
        clock.set(NOW + timedelta(hours=1))

        async def tick():
            await cron.tick(s.rt)
            await s.rt.dispatcher.idle()

        asyncio.run(tick())
        s.wait(lambda: len(s.mails()) == 2)
        mailed = s.mails()[1]
        assert mailed.get_body(preferencelist=("plain",)).get_content().startswith("⏰ greeter")
        assert header_ids(mailed, "In-Reply-To") == [first]


def test_quoted_history_and_signatures_are_cut():
    assert strip_reply("Yes.\n\nOn Tue, 3 Mar 2026, Iris <i@x> wrote:\n> old") == "Yes."
    assert strip_reply("Sure\n> quoted\nthing\n-- \nAda\nCEO") == "Sure\nthing"
    assert strip_reply("Ok\n\n-----Original Message-----\nFrom: x") == "Ok"


def test_smtp_without_starttls_is_refused_unless_the_host_is_loopback():
    server = parse_smtp_url("smtp://u:p%40ss@mail.example.com")
    assert (server.port, server.password, server.loopback) == (587, "p@ss", False)
    assert parse_smtp_url("smtps://u:p@127.0.0.1").port == 465
    with MailServer() as plain:
        # "localhost" is loopback: sent in the clear; the machine's own name is not
        local = EmailSender(parse_smtp_url(plain.url(host="localhost")), "iris@x.example")
        asyncio.run(local.send({"to": "ada@example.com", "chat_id": "t1"}, "hi"))
        assert len(plain.messages()) == 1
        import socket

        name = socket.gethostname()
        remote = EmailSender(parse_smtp_url(f"smtp://{name}:{plain.port}"), "iris@x.example")
        if remote.server.loopback:
            pytest.skip("the host name resolves as loopback literally")
        with pytest.raises(DeliveryFailed, match="STARTTLS") as refused:
            asyncio.run(remote.send({"to": "ada@example.com", "chat_id": "t1"}, "hi"))
        assert refused.value.retryable is False
        assert len(plain.messages()) == 1


def self_signed(tmp_path):
    import datetime as dt

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=800))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_file, key_file


def test_starttls_is_used_when_offered_and_the_login_goes_over_it(tmp_path, monkeypatch):
    import ssl

    cert_file, key_file = self_signed(tmp_path)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_file, key_file)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert_file))  # the client trusts this server
    with MailServer(user="iris", password="pw", tls_context=context,
                    require_starttls=True) as server:
        sender = EmailSender(parse_smtp_url(server.url(host="localhost")), "iris@x.example")
        asyncio.run(sender.send({"to": "ada@example.com", "chat_id": "t1"}, "over TLS"))
        assert server.tls_used == [True] and len(server.messages()) == 1
        wrong = EmailSender(parse_smtp_url(f"smtp://iris:nope@localhost:{server.port}"),
                            "iris@x.example")
        with pytest.raises(DeliveryFailed, match="login refused") as refused:
            asyncio.run(wrong.send({"to": "ada@example.com", "chat_id": "t1"}, "x"))
        assert refused.value.retryable is False and len(server.messages()) == 1
