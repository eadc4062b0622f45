"""An HTML-only mail is read in a parsing child (core/parsers), never in the server, with the
same limits as every other untrusted document: its visible text reaches the turn, and a body
past the output cap is cut with a note. Through the real webhook (raw RFC 822 with the bearer
secret)."""

import json
from email.message import EmailMessage

import pytest

from iris_testing.mail_inbound import RECEIVER, new_message_id
from iris_testing.platform_stack import platform_stack


def html_mail(html: str, subject: str) -> bytes:
    message = EmailMessage()
    message["From"] = "Ada Lovelace <ada@example.com>"
    message["To"] = "iris@iris.example.net"
    message["Subject"] = subject
    message["Message-ID"] = f"<{new_message_id()}>"
    message["Authentication-Results"] = f"{RECEIVER}; spf=pass dkim=pass dmarc=pass"
    message.set_content(html, subtype="html")
    return bytes(message)


def stored_texts(stack) -> list[str]:
    rows = stack.rt.store.db.query("SELECT payload FROM inbox ORDER BY id")
    return [json.loads(row["payload"])["text"] for row in rows]


def post(stack, raw: bytes) -> None:
    response = stack.email_post(raw)
    assert response.json()["status"] == "recorded", response.text


@pytest.mark.process  # starts a child process (make check runs without them)
def test_an_html_only_mail_is_read_in_a_child_under_the_parse_limits(iris_home):
    ordinary = ("<html><head><style>p{color:red}</style><script>steal()</script></head>"
                "<body><p>Lunch on <b>Friday</b>?</p><div>Ada</div></body></html>")
    long = "<p>Read me</p>" + "<p>filler words</p>" * 20_000
    with platform_stack(iris_home, IRIS_PARSE_OUTPUT_CHARS="2000") as stack:
        post(stack, html_mail(ordinary, "ordinary"))
        post(stack, html_mail(long, "long"))
        texts = stored_texts(stack)
    assert "Lunch on Friday?" in texts[0] and "Ada" in texts[0]
    assert "steal()" not in texts[0] and "color:red" not in texts[0]
    # the child's output cap holds for mail bodies too: the text stops there, with the note
    assert texts[1].startswith("Subject: long") and "Read me" in texts[1]
    assert "[the mail's text was cut: its text is longer than 2000 characters]" in texts[1]
    assert len(texts[1]) < 2_200
