"""Files in on Google Chat and Microsoft Teams, end to end through real HTTP: the fakes serve the
files in the platforms' shapes, Iris' senders download them, the documents path saves them under
the sender's inbox/ and the scripted model (through litellm) sees their text; pictures become
image attachments whose bytes download; an oversized file is refused."""

import asyncio
import json
from contextlib import contextmanager

import pytest

from core.model.llm import LiteLLMModel
from iris_testing.llm_server import ScriptedLLM
from iris_testing.platform_stack import platform_stack
from iris_testing.server import serve
from tests.functions.test_media_in import BIG, CSV, PDF, PNG, assert_pdf_and_csv_seen, prompts

DM = "spaces/AAAAdm-ada"
ACCOUNT = "googlechat:users/1001"


@pytest.fixture
def llm():
    scripted = ScriptedLLM()
    scripted.handler = lambda body: "Noted."
    return scripted


@contextmanager
def media_stack(home, llm):
    with serve(llm.app) as server, platform_stack(
            home, jwt_platforms=True, model=LiteLLMModel(
                "openai/scripted-model", api_base=f"{server.url}/v1", api_key="k")) as running:
        yield running


def chat_post(stack, event):
    return stack.http.post(f"{stack.url}/googlechat/events", content=json.dumps(event),
                           headers=stack.googlechat.headers())


def inbox_dir(stack, account):
    user = stack.rt.store.users.resolve(account)
    return stack.rt.settings.home / "workspaces" / user / "inbox"


@pytest.mark.process  # the PDF is read in a child process (make check runs without them)
def test_google_chat_files_are_saved_and_their_text_seen(iris_home, llm):
    with media_stack(iris_home, llm) as stack:
        chat = stack.googlechat
        pdf = chat.upload(PDF, "application/pdf", "tides.pdf")
        assert chat_post(stack, chat.event("Summarise these", attachments=[pdf])).status_code \
            == 200
        stack.wait(lambda: chat.messages(DM))
        csv = chat.upload(CSV, "text/csv", "harbours.csv")
        chat_post(stack, chat.event("", attachments=[csv]))
        stack.wait(lambda: len(chat.messages(DM)) == 2)
        first, second = prompts(llm)
        assert first.startswith("Summarise these\n\n[the user sent a document")
        assert_pdf_and_csv_seen(llm, first, second)
        box = inbox_dir(stack, ACCOUNT)
        assert (box / "tides.pdf").read_bytes() == PDF
        assert (box / "harbours.csv").read_bytes() == CSV


def test_a_google_chat_picture_downloads_and_an_oversized_file_is_refused(iris_home, llm):
    with media_stack(iris_home, llm) as stack:
        chat = stack.googlechat
        picture = chat.upload(PNG, "image/png", "shot.png")
        chat_post(stack, chat.event("look", attachments=[picture]))
        stack.wait(lambda: chat.messages(DM))
        user = stack.rt.store.users.resolve(ACCOUNT)
        (entry,) = stack.rt.store.inbox.latest_messages(user, limit=10)
        (attachment,) = entry.attachments
        assert (attachment.kind, attachment.mime_type) == ("image", "image/png")
        sender = stack.rt.senders["googlechat"]
        assert asyncio.run(sender.download(attachment.ref)) == PNG
        big = chat.upload(b"x" * BIG, "application/pdf", "huge.pdf")
        chat_post(stack, chat.event("read this", attachments=[big]))
        stack.wait(lambda: len(chat.messages(DM)) == 2)
        assert "20 MB limit" in prompts(llm)[-1]
        assert not (inbox_dir(stack, ACCOUNT) / "huge.pdf").exists()


TEAMS_CHAT = "a:1personal-ada"
TEAMS_ACCOUNT = "teams:29:1ada"


def teams_post(stack, activity):
    return stack.http.post(f"{stack.url}/teams/messages", content=json.dumps(activity),
                           headers=stack.teams.headers())


@pytest.mark.process  # the PDF is read in a child process (make check runs without them)
def test_teams_files_are_saved_and_their_text_seen(iris_home, llm):
    with media_stack(iris_home, llm) as stack:
        teams = stack.teams
        pdf = teams.file(PDF, "tides.pdf")
        assert teams_post(stack, teams.activity("Summarise these", attachments=[pdf])
                          ).status_code == 202
        stack.wait(lambda: teams.messages(TEAMS_CHAT))
        teams_post(stack, teams.activity("", attachments=[teams.file(CSV, "harbours.csv")]))
        stack.wait(lambda: len(teams.messages(TEAMS_CHAT)) == 2)
        first, second = prompts(llm)
        assert first.startswith("Summarise these\n\n[the user sent a document")
        assert_pdf_and_csv_seen(llm, first, second)
        box = inbox_dir(stack, TEAMS_ACCOUNT)
        assert (box / "tides.pdf").read_bytes() == PDF
        assert (box / "harbours.csv").read_bytes() == CSV


def test_a_pasted_teams_picture_downloads_with_the_bots_token_only_over_https(iris_home, llm):
    with media_stack(iris_home, llm) as stack:
        teams = stack.teams
        teams_post(stack, teams.activity("look", attachments=[teams.picture(PNG)]))
        stack.wait(lambda: teams.messages(TEAMS_CHAT))
        user = stack.rt.store.users.resolve(TEAMS_ACCOUNT)
        (entry,) = stack.rt.store.inbox.latest_messages(user, limit=10)
        (attachment,) = entry.attachments
        assert attachment.kind == "image" and attachment.ref.startswith("connector:")
        sender = stack.rt.senders["teams"]
        assert asyncio.run(sender.download(attachment.ref)) == PNG
        from core.contracts.senders import DeliveryFailed

        for ref in ("connector:http://files.example.net/x", "other:https://x.example/y"):
            with pytest.raises(DeliveryFailed):
                asyncio.run(sender.download(ref))
