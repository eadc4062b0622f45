"""Documents in, end to end: a PDF sent on Telegram (fetched through the Bot API fake) and a
CSV sent as an OpenAI ``file`` part over the HTTP API are saved under the user's inbox/, and the
model sees where, with their text, wrapped as untrusted."""

import base64

import pytest

from iris_testing.llm_server import ScriptedLLM
from iris_testing.platform_stack import platform_stack
from iris_testing.web_fakes import make_pdf
from tests.fakes.stack import emulator_stack

PDF = make_pdf(["Quarterly report", "Revenue grew by 12 percent."])


def document_update(stack, data, name, mime, caption=None):
    stack.telegram.add_file("doc-1", data, f"documents/{name}")
    update = stack.telegram.make_update(None)
    update["message"]["document"] = {"file_id": "doc-1", "file_unique_id": "u-doc-1",
                                     "file_name": name, "mime_type": mime,
                                     "file_size": len(data)}
    if caption:
        update["message"]["caption"] = caption
    return update


@pytest.mark.process  # starts a child process (make check runs without them)
def test_a_telegram_pdf_is_saved_and_its_text_seen(iris_home):
    with platform_stack(iris_home) as stack:
        update = document_update(stack, PDF, "report.pdf", "application/pdf", "Summarise it")
        assert stack.telegram_post(update).json()["status"] == "recorded"
        stack.wait(lambda: stack.telegram.sent_messages(4242), timeout=60)
        (seen,) = stack.model.seen
        assert seen.startswith("Summarise it\n\n[the user sent a document, saved as "
                               "inbox/report.pdf (its text in inbox/report.pdf.txt): PDF, 1 page")
        assert '<untrusted source="document">' in seen
        assert "Quarterly report\nRevenue grew by 12 percent." in seen
        user = stack.rt.store.users.resolve("telegram:4242")
        workspace = stack.rt.settings.home / "workspaces" / user / "inbox"
        assert (workspace / "report.pdf").read_bytes() == PDF
        assert "Revenue grew" in (workspace / "report.pdf.txt").read_text()

        stack.telegram_post(document_update(stack, PDF, "report.pdf", "application/pdf"))
        stack.wait(lambda: len(stack.telegram.sent_messages(4242)) == 2, timeout=60)
        assert "saved as inbox/report-2.pdf" in stack.model.seen[-1]  # never overwritten


def test_an_unreadable_file_is_not_saved_and_the_model_is_told(iris_home):
    with platform_stack(iris_home) as stack:
        stack.telegram_post(document_update(stack, b"MZ\x90\x00binary", "tool.exe",
                                            "application/octet-stream", "what is this?"))
        stack.wait(lambda: stack.telegram.sent_messages(4242), timeout=60)
        assert stack.model.seen == [
            "what is this?\n\n[the user sent 'tool.exe', which was not saved: only PDF, text, "
            "Markdown, CSV and JSON files are read]"]
        user = stack.rt.store.users.resolve("telegram:4242")
        assert not (stack.rt.settings.home / "workspaces" / user / "inbox").exists()


@pytest.fixture
def llm():
    return ScriptedLLM()


def file_part(data, name, mime):
    url = f"data:{mime};base64,{base64.b64encode(data).decode()}"
    return {"type": "file", "file": {"filename": name, "file_data": url}}


def test_an_openai_file_part_lands_in_that_users_inbox_only(llm, monkeypatch):
    csv = "city,tide_m\nKing's Lynn,7.1\nHull,6.4\n" + "".join(
        f"Town{i},{i % 7}.0\n" for i in range(2000))
    with emulator_stack(llm, monkeypatch) as stack:
        llm.tool_call("memory", {"action": "add", "content": "Tides CSV from Alice"}).reply("Ok.")
        answer = stack.client.chat.completions.create(model="iris", user="alice", messages=[
            {"role": "user", "content": [{"type": "text", "text": "Keep this."},
                                         file_part(csv.encode(), "tides.csv", "text/csv")]}])
        assert answer.choices[0].message.content == "Ok."
        prompt = llm.requests[0]["messages"][-1]["content"]
        assert prompt.startswith("Keep this.\n\n[the user sent a document, saved as "
                                 "inbox/tides.csv: CSV, ")
        assert "read_file 'inbox/tides.csv' for the rest" in prompt
        assert "King's Lynn,7.1" in prompt and "Town1999" not in prompt
        held = [m["content"] for m in llm.requests[-1]["messages"] if m["role"] == "tool"]
        assert "held as #1" in held[0]  # a document is outside content: the write waits
        rt = stack.runtime
        alice = rt.store.users.resolve("http:alice")
        assert (rt.settings.home / "workspaces" / alice / "inbox" / "tides.csv").read_text() \
            == csv
        llm.tool_call("read_file", {"path": "inbox/tides.csv"}).reply("Nothing.")
        stack.client.chat.completions.create(model="iris", user="bob", messages=[
            {"role": "user", "content": "Read inbox/tides.csv"}])
        last = llm.requests[-1]["messages"][-1]["content"]
        assert "no such file in the workspace: 'inbox/tides.csv'" in last
        assert list((rt.settings.home / "workspaces").glob("*/inbox/tides.csv")) == [
            rt.settings.home / "workspaces" / alice / "inbox" / "tides.csv"]


def test_a_bad_file_part_is_a_clear_400(llm, monkeypatch):
    import openai

    with emulator_stack(llm, monkeypatch) as stack:
        with pytest.raises(openai.BadRequestError, match="file_data is not valid base64"):
            stack.client.chat.completions.create(model="iris", messages=[
                {"role": "user", "content": [{"type": "file", "file": {
                    "filename": "x.txt", "file_data": "data:text/plain;base64,@@@"}}]}])
        assert llm.requests == []
