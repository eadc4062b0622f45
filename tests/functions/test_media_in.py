"""Files in on WhatsApp, Slack and email, end to end through real HTTP: the platform fakes serve
the files in their real shapes, Iris' senders download them, the documents path saves them under
the sender's inbox/, and the scripted model (through litellm) sees their text, wrapped as
untrusted. Images become image attachments whose bytes download; oversized files are refused."""

import asyncio
import hashlib
from contextlib import contextmanager

import pytest

from core.model.llm import LiteLLMModel
from iris_testing.llm_server import ScriptedLLM
from iris_testing.mail_inbound import mailgun_files, mailgun_form, raw_mail
from iris_testing.platform_stack import MAILGUN_KEY, platform_stack
from iris_testing.server import serve
from iris_testing.web_fakes import make_pdf

ADA = "4915112345678"
PDF = make_pdf(["Tide table", "High water at 06:42 in Wells."])
CSV = b"harbour,depth_m\nWells,2.4\nBlakeney,1.9\n"
PNG = b"\x89PNG\r\n\x1a\n" + hashlib.sha256(b"picture").digest() * 8
BIG = 21 * 1024 * 1024


@pytest.fixture
def llm():
    scripted = ScriptedLLM()
    scripted.handler = lambda body: "Noted."
    return scripted


@contextmanager
def media_stack(home, llm, **env):
    """Every platform, the model being ``llm`` through litellm."""
    with serve(llm.app) as server, platform_stack(
        home, model=LiteLLMModel("openai/scripted-model", api_base=f"{server.url}/v1",
                                 api_key="k"), **env) as running:
        yield running


@pytest.fixture
def stack(iris_home, llm):
    with media_stack(iris_home, llm) as running:
        yield running


def prompts(llm):
    return [r["messages"][-1]["content"] for r in llm.requests]


def inbox_dir(stack, account):
    user = stack.rt.store.users.resolve(account)
    return stack.rt.settings.home / "workspaces" / user / "inbox"


def entries(stack, account):
    user = stack.rt.store.users.resolve(account)
    return stack.rt.store.inbox.latest_messages(user, limit=10)


def assert_pdf_and_csv_seen(llm, seen_pdf, seen_csv):
    assert '<untrusted source="document">' in seen_pdf
    assert "High water at 06:42 in Wells." in seen_pdf
    assert "saved as inbox/tides.pdf (its text in inbox/tides.pdf.txt): PDF, 1 page" in seen_pdf
    assert "saved as inbox/harbours.csv: CSV" in seen_csv and "Blakeney,1.9" in seen_csv


# WhatsApp


@pytest.mark.process  # starts a child process (make check runs without them)
def test_whatsapp_documents_are_saved_and_their_text_seen(stack, llm):
    wa = stack.whatsapp
    pdf = wa.media_message("document", "901", PDF, "application/pdf", filename="tides.pdf",
                           caption="Summarise these")
    assert stack.whatsapp_post(pdf).json()["statuses"] == ["recorded"]
    stack.wait(lambda: wa.sent(ADA))
    csv = wa.media_message("document", "902", CSV, "text/csv", filename="harbours.csv")
    stack.whatsapp_post(csv)
    stack.wait(lambda: len(wa.sent(ADA)) == 2)
    first, second = prompts(llm)
    assert first.startswith("Summarise these\n\n[the user sent a document")
    assert_pdf_and_csv_seen(llm, first, second)
    box = inbox_dir(stack, f"whatsapp:{ADA}")
    assert (box / "tides.pdf").read_bytes() == PDF and (box / "harbours.csv").read_bytes() == CSV


def test_a_whatsapp_image_is_an_image_attachment_whose_bytes_download(stack, llm):
    wa = stack.whatsapp
    for kind, media_id in (("image", "903"), ("document", "904")):
        payload = wa.media_message(kind, media_id, PNG, "image/png", caption="look",
                                   filename="shot.png" if kind == "document" else None)
        assert stack.whatsapp_post(payload).json()["statuses"] == ["recorded"]
    stack.wait(lambda: len(wa.sent(ADA)) == 2)
    found = [a for e in entries(stack, f"whatsapp:{ADA}") for a in e.attachments]
    assert sorted((a.kind, a.ref, a.mime_type) for a in found) == [
        ("image", "903", "image/png"), ("image", "904", "image/png")]
    for attachment in found:
        assert asyncio.run(stack.rt.senders["whatsapp"].download(attachment.ref)) == PNG
    assert not inbox_dir(stack, f"whatsapp:{ADA}").exists()


def test_an_oversized_whatsapp_file_is_refused_and_nothing_saved(stack, llm):
    wa = stack.whatsapp
    payload = wa.media_message("document", "905", b"%PDF-1.4\n" + b"0" * BIG,
                               "application/pdf", filename="huge.pdf", caption="read this")
    stack.whatsapp_post(payload)
    stack.wait(lambda: wa.sent(ADA))
    (seen,) = prompts(llm)
    assert seen == ("read this\n\n[the user sent 'huge.pdf', which was not saved: it is 21.0 MB, "
                    "over the 20 MB limit]")
    assert not inbox_dir(stack, f"whatsapp:{ADA}").exists()
    assert not any(path.startswith("/_media/") for _, path in wa.requests)


@pytest.mark.process  # starts a child process (make check runs without them)
def test_a_file_of_another_users_workspace_is_untouched(stack, llm):
    bob = stack.rt.store.users.for_account("whatsapp:4470000000001")
    bobs = stack.rt.settings.home / "workspaces" / bob / "inbox"
    bobs.mkdir(parents=True)
    (bobs / "tides.pdf").write_bytes(b"Bob's own tides")
    wa = stack.whatsapp
    stack.whatsapp_post(wa.media_message("document", "906", PDF, "application/pdf",
                                         filename="tides.pdf"))
    stack.wait(lambda: wa.sent(ADA))
    assert (bobs / "tides.pdf").read_bytes() == b"Bob's own tides"
    assert sorted(p.name for p in bobs.iterdir()) == ["tides.pdf"]
    assert (inbox_dir(stack, f"whatsapp:{ADA}") / "tides.pdf").read_bytes() == PDF


# Slack


def slack_files(stack, *files, text="", **kwargs):
    slack = stack.slack
    shared = [slack.add_file(name, data, mime) for name, data, mime in files]
    event = slack.file_event(text, shared, channel="D123", channel_type="im", **kwargs)
    return stack.slack_post(slack.event_payload(event))


@pytest.mark.process  # starts a child process (make check runs without them)
def test_slack_files_are_saved_and_their_text_seen(stack, llm):
    assert slack_files(stack, ("tides.pdf", PDF, "application/pdf"),
                       ("harbours.csv", CSV, "text/csv"), text="both please").status_code == 200
    stack.wait(lambda: stack.slack.posted("D123"))
    (seen,) = prompts(llm)
    assert seen.startswith("both please\n\n[the user sent a document")
    assert_pdf_and_csv_seen(llm, seen, seen)
    box = inbox_dir(stack, "slack:T1/U123")
    assert (box / "tides.pdf").read_bytes() == PDF and (box / "harbours.csv").read_bytes() == CSV
    assert all("/download/" in path for path in stack.slack.file_downloads)


def test_a_slack_image_is_an_image_attachment_whose_bytes_download(stack, llm):
    slack_files(stack, ("photo.png", PNG, "image/png"))
    stack.wait(lambda: stack.slack.posted("D123"))
    (entry,) = entries(stack, "slack:T1/U123")
    (attachment,) = entry.attachments
    assert (attachment.kind, attachment.mime_type, attachment.name) == (
        "image", "image/png", "photo.png")
    assert asyncio.run(stack.rt.senders["slack"].download(attachment.ref)) == PNG


def test_slack_files_without_files_read_and_oversized_ones_are_refused(stack, llm):
    stack.slack.file_readers = set()  # the app was installed without files:read
    slack_files(stack, ("tides.pdf", PDF, "application/pdf"), text="one")
    stack.wait(lambda: stack.slack.posted("D123"))
    assert "which was not saved: Slack sent its sign-in page instead of the file: the Slack " \
           "app needs the files:read scope" in prompts(llm)[0]
    stack.slack.file_readers = None
    slack_files(stack, ("huge.csv", b"a,b\n" + b"1,2\n" * (BIG // 4), "text/csv"), text="two")
    stack.wait(lambda: len(stack.slack.posted("D123")) == 2)
    assert prompts(llm)[1] == ("two\n\n[the user sent 'huge.csv', which was not saved: it is "
                               "21.0 MB, over the 20 MB limit]")
    assert not inbox_dir(stack, "slack:T1/U123").exists()


def test_slack_sends_the_bot_token_to_slack_hosts_only():
    from core.intake.documents import DocumentRefused
    from core.platforms.slack import SlackSender

    sender = SlackSender("xoxb-secret", "http://127.0.0.1:9/api/")
    for url in ("https://evil.example/files-pri/x/download/a.pdf",
                "https://files.slack.com.evil.example/a.pdf", "file:///etc/passwd"):
        with pytest.raises(DocumentRefused, match="not on Slack's file servers"):
            asyncio.run(sender.download(url))


# Email


@pytest.mark.process  # starts a child process (make check runs without them)
def test_email_attachments_are_saved_and_their_text_seen(stack, llm):
    raw = raw_mail("Both attached.", attachments=[("tides.pdf", PDF, "application/pdf"),
                                                  ("harbours.csv", CSV, "text/csv")])
    assert stack.email_post(raw).json()["status"] == "recorded"
    stack.wait(stack.mails)
    (seen,) = prompts(llm)
    assert seen.startswith("Subject: Hello Iris\n\nBoth attached.\n\n[the user sent a document")
    assert_pdf_and_csv_seen(llm, seen, seen)
    box = inbox_dir(stack, "email:ada@example.com")
    assert (box / "tides.pdf").read_bytes() == PDF and (box / "harbours.csv").read_bytes() == CSV


def test_mailgun_attachments_are_saved_and_an_image_downloads(stack, llm):
    files = [("harbours.csv", CSV, "text/csv"), ("photo.png", PNG, "image/png")]
    form = mailgun_form("See attached.", key=MAILGUN_KEY, attachment_count=len(files))
    response = stack.mailgun_post(form, attachments=mailgun_files(files))
    assert response.json()["status"] == "recorded"
    stack.wait(stack.mails)
    (seen,) = prompts(llm)
    assert "saved as inbox/harbours.csv: CSV" in seen and "Wells,2.4" in seen
    (entry,) = entries(stack, "email:ada@example.com")
    image = entry.attachments[1]
    assert (image.kind, image.name) == ("image", "photo.png")
    assert asyncio.run(stack.rt.senders["email"].download(image.ref)) == PNG
    user = stack.rt.store.users.resolve("email:ada@example.com")
    assert image.ref.startswith(f"{user}/inbound/email/")


def test_an_oversized_or_eleventh_email_attachment_is_refused(stack, llm):
    many = [(f"note{i}.txt", f"note {i}".encode(), "text/plain") for i in range(1, 11)]
    raw = raw_mail("Lots.", attachments=[("huge.pdf", b"%PDF-1.4\n" + b"0" * BIG,
                                          "application/pdf"), *many])
    response = stack.email_post(raw)
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "recorded"
    stack.wait(stack.mails)
    (seen,) = prompts(llm)
    assert "[the user attached 'huge.pdf', which was not saved: it is 21.0 MB, over the 20 MB " \
           "limit]" in seen
    assert "[the user sent 1 more file ('note10.txt'), which was not read: at most 10 files " \
           "are read from one message]" in seen
    box = inbox_dir(stack, "email:ada@example.com")
    assert sorted(p.name for p in box.iterdir()) == [f"note{i}.txt" for i in range(1, 10)]


def test_a_strangers_attachments_are_not_kept(iris_home, llm):
    with serve(llm.app) as server, platform_stack(
            iris_home, IRIS_EMAIL_ACCESS="pairing",
            model=LiteLLMModel("openai/scripted-model", api_base=f"{server.url}/v1",
                               api_key="k")) as s:
        raw = raw_mail("hi", attachments=[("tides.pdf", PDF, "application/pdf")])
        assert s.email_post(raw).json()["status"] == "denied"
        s.wait(s.mails)
        assert not (s.rt.settings.home / "objects").exists() or not any(
            p.is_file() for p in (s.rt.settings.home / "objects").rglob("*"))
        assert llm.requests == []
