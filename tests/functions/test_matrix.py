"""Matrix as an application service over real HTTP: transactions pushed with the hs_token →
Iris → worker → Iris' Matrix sender → the fake homeserver on loopback
(iris_testing/matrix_api.py)."""

import asyncio
import subprocess
import sys
from datetime import timedelta

import pytest

from core.clock import ManualClock
from core.messages import Message
from core.platforms.matrix import MESSAGE_LIMIT, MatrixSender
from core.platforms.matrix_inbound import ENCRYPTED, OTHER_KINDS
from iris_testing.images import as_data_url, make_png
from iris_testing.llm_server import ScriptedLLM
from iris_testing.matrix_api import BOT, PERSON, ROOM, FakeHomeserver
from iris_testing.platform_stack import MATRIX_AS_TOKEN, EchoModel, platform_stack
from iris_testing.server import serve, start_server
from tests.clocks import NOW
from tests.core.scheduler.cron_helpers import make_job
from tests.functions.clarify_common import ASK, user_turns
from tests.functions.test_line import tick
from tests.functions.test_media_in import BIG, CSV, media_stack, prompts
from tests.functions.test_voice import FakeWhisper


@pytest.fixture
def stack(iris_home):
    with platform_stack(iris_home) as running:
        yield running


def count(stack, table="inbox"):
    return stack.rt.store.db.scalar(f"SELECT count(*) FROM {table}")


def put(stack, *events, **kw):
    return stack.matrix_put(stack.matrix.transaction(*events), **kw)


def test_a_message_is_answered_in_its_room(stack):
    response = put(stack, stack.matrix.message_event("make **this** plain"))
    assert (response.status_code, response.json()) == (200, {})
    stack.wait(lambda: stack.matrix.sent(ROOM))
    assert stack.matrix.sent(ROOM) == ["re: make this plain"]


def test_the_hs_token_is_checked_before_anything_is_read(stack):
    event = stack.matrix.message_event("hello")
    assert put(stack, event, token=None).status_code == 401
    assert put(stack, event, token="not-the-hs-token").status_code == 403
    assert put(stack, event, token="not-the-hs-token", legacy=True).status_code == 403
    assert count(stack) == 0 and count(stack, "users") == 0 and stack.model.seen == []
    assert put(stack, event, legacy=True).status_code == 200  # the legacy query parameter


@pytest.mark.parametrize(("body", "named"), [
    (b"{not json", "not valid JSON"), (b'{"events": [{"type": 5}]}', "events.0"),
])
def test_a_malformed_transaction_is_a_400_naming_what_failed(stack, body, named):
    response = stack.matrix_put(body, txn="bad")
    assert response.status_code == 400
    error = response.json()
    assert "not a Matrix transaction" in str(error) and named in str(error)
    assert count(stack) == 0


def test_a_transaction_sent_again_records_nothing_new(stack):
    body = stack.matrix.transaction(stack.matrix.message_event("once please"))
    for _ in range(3):
        assert stack.matrix_put(body, txn="txn-7").status_code == 200
    stack.wait(stack.settled)
    stack.wait(lambda: stack.matrix.sent(ROOM))
    assert stack.model.seen == ["once please"] and stack.matrix.sent(ROOM) == ["re: once please"]


def test_iris_own_messages_and_notices_are_not_read(stack):
    own = stack.matrix.message_event("my own echo", sender=BOT)
    notice = stack.matrix.message_event("a bot's notice", msgtype="m.notice")
    assert put(stack, own, notice).status_code == 200
    assert count(stack) == 0


def test_an_invitation_is_accepted(stack):
    room = "!newroom:example.org"
    assert put(stack, stack.matrix.invite_event(room)).status_code == 200
    stack.wait(lambda: stack.matrix.joined == [room])


def test_a_stranger_gets_a_pairing_code_and_after_approval_a_reply(iris_home):
    with platform_stack(iris_home, IRIS_MATRIX_ACCESS="pairing") as s:
        put(s, s.matrix.message_event("hello?"))
        s.wait(lambda: s.matrix.sent(ROOM))
        (answer,) = s.matrix.sent(ROOM)
        assert "pairing code" in answer.lower() and count(s) == 0 and s.model.seen == []
        code = answer.split("pairing code is ", 1)[1].split(" ", 1)[0]
        from core.identity.pairing import Pairing

        Pairing(s.rt.store).approve(code, by="cli:operator")
        put(s, s.matrix.message_event("hello again"))
        s.wait(lambda: "re: hello again" in s.matrix.sent(ROOM))


def test_a_long_reply_is_split(stack):
    long_text = "\n\n".join(f"paragraph {i} " + "word " * 1000 for i in range(8))
    stack.model.before = lambda messages: Message(role="assistant", content=long_text)
    put(stack, stack.matrix.message_event("write a lot"))
    stack.wait(lambda: stack.settled() and stack.matrix.sent(ROOM))
    sent = stack.matrix.sent(ROOM)
    assert len(sent) == 3 and all(len(body) <= MESSAGE_LIMIT for body in sent)
    assert "".join(sent).count("paragraph") == 8


def test_a_retried_send_reuses_its_transaction_id_and_is_not_shown_twice(iris_home):
    fake = FakeHomeserver(as_token=MATRIX_AS_TOKEN)
    server = start_server(fake.app)
    try:
        sender = MatrixSender(server.url, MATRIX_AS_TOKEN, BOT)
        from core.store.deliveries import Delivery

        delivery = Delivery(
            id=3,
            user_id="usr_a",
            source="turn:x",
            platform="matrix",
            chat_key=f"matrix:{ROOM}",
            target={"chat_id": ROOM},
            text="hello",
            status="pending",
            attempts=1,
            next_attempt_at=0.0,
            last_error=None,
            platform_ids=[],
            created_at=0.0,
            sent_at=None,
        )
        first = asyncio.run(sender.send_record(delivery))
        again = asyncio.run(sender.send_record(delivery))
        assert first == again and fake.sent(ROOM) == ["hello"]
    finally:
        server.request_stop()
        server.thread.join(timeout=10)


def test_a_rate_limited_send_is_retried_and_sent_once(stack):
    stack.matrix.fail_next(1)
    put(stack, stack.matrix.message_event("hello"))
    stack.wait(
        lambda: stack.rt.store.db.scalar(
            "SELECT count(*) FROM deliveries WHERE last_error IS NOT NULL AND claimed_by IS NULL"
        )
    )
    assert "M_LIMIT_EXCEEDED" in stack.rt.store.db.scalar("SELECT last_error FROM deliveries")
    stack.rt.store.db.execute("UPDATE deliveries SET next_attempt_at = 0")
    asyncio.run(stack.rt.delivery.sweep())
    asyncio.run(stack.rt.delivery.sweep())
    assert stack.matrix.sent(ROOM) == ["re: hello"]


def test_a_question_is_answered_by_its_number(scripted_llm, iris_home):
    llm, model = scripted_llm
    llm.tool_call("clarify", ASK)
    with platform_stack(iris_home, model=model) as stack:
        put(stack, stack.matrix.message_event("order me a coffee"))
        stack.wait(lambda: stack.matrix.sent(ROOM) and stack.settled())
        (question,) = stack.matrix.sent(ROOM)
        assert question.startswith("Which size?") and "2. Large" in question
        llm.reply("Large it is.")
        put(stack, stack.matrix.message_event("2"), txn="t2")
        stack.wait(lambda: len(stack.matrix.sent(ROOM)) == 2 and stack.settled())
        assert stack.matrix.sent(ROOM)[1] == "Large it is."
        assert "Large" in user_turns(llm)[-1]


def test_a_cron_job_delivers_there(iris_home):
    clock = ManualClock(NOW)
    with platform_stack(iris_home, clock=clock) as s:
        put(s, s.matrix.message_event("hi"))
        s.wait(lambda: s.matrix.sent(ROOM))
        s.wait(s.settled)
        make_job(
            s.rt.store,
            s.rt.settings,
            schedule="every 5h",
            at=NOW,
            account=f"matrix:{PERSON}",
            prompt="say hi",
            deliver="matrix",
            name="greeter",
        )
        clock.set(NOW + timedelta(hours=5))
        tick(s.rt)
        s.wait(lambda: len(s.matrix.sent(ROOM)) == 2)
        assert s.matrix.sent(ROOM)[1].startswith("⏰ greeter")


def test_link_joins_a_matrix_account_to_a_telegram_one(iris_home):
    with platform_stack(iris_home, model=EchoModel(), IRIS_MATRIX_ACCESS="pairing") as s:
        s.telegram_post(s.telegram.make_update("I'm Ada"))
        s.wait(lambda: s.telegram.sent_messages(4242))
        s.wait(s.settled)
        ada = s.rt.store.users.resolve("telegram:4242")
        s.telegram_post(s.telegram.make_update("/link"))
        s.wait(lambda: len(s.telegram.sent_messages(4242)) == 2)
        issued = s.telegram.sent_messages(4242)[1]["text"]
        code = issued.split("link code is ", 1)[1].split(" ", 1)[0].strip("<>/b.")
        put(s, s.matrix.message_event(f"/link {code}"))
        s.wait(lambda: s.matrix.sent(ROOM))
        assert s.matrix.sent(ROOM)[0].startswith(f"Linked matrix:{PERSON} with telegram:4242")
        s.wait(lambda: s.rt.store.users.resolve(f"matrix:{PERSON}") == ada)


def test_the_matrix_webhook_module_imports_no_heavy_sdk():
    code = (
        "import sys, functions.matrix;"
        "print([m for m in ('litellm', 'mcp', 'modal', 'telegram', 'boto3', 'daytona',"
        " 'httpx') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# Files and images (m.image, m.file) through the authenticated media endpoint


@pytest.fixture
def llm():
    scripted = ScriptedLLM()
    scripted.handler = lambda body: "Noted."
    return scripted


@pytest.fixture
def seeing(iris_home, llm):
    with media_stack(iris_home, llm, IRIS_MODEL_VISION="true") as running:
        yield running


def matrix_user(stack):
    return stack.rt.store.users.resolve(f"matrix:{PERSON}")


def test_an_image_reaches_the_model_with_its_caption(seeing, llm):
    png = make_png()
    mxc = seeing.matrix.add_media(png, "image/png")
    event = seeing.matrix.media_event(
        "m.image",
        mxc,
        "what is this?",
        filename="photo.png",
        mimetype="image/png",
        size=len(png),
    )
    assert put(seeing, event).status_code == 200
    seeing.wait(lambda: seeing.matrix.sent(ROOM))
    (request,) = llm.requests
    content = request["messages"][-1]["content"]
    assert {"type": "text", "text": "what is this?"} in content
    assert [p["image_url"]["url"] for p in content if p["type"] == "image_url"] == [
        as_data_url(png)
    ]
    assert seeing.matrix.media_requests == [mxc.removeprefix("mxc://")]


def test_a_document_is_saved_and_its_text_read_without_a_caption(seeing, llm):
    mxc = seeing.matrix.add_media(CSV, "text/csv")
    event = seeing.matrix.media_event(
        "m.file",
        mxc,
        "harbours.csv",
        filename="harbours.csv",
        mimetype="text/csv",
        size=len(CSV),
    )
    put(seeing, event)
    seeing.wait(lambda: seeing.matrix.sent(ROOM))
    (seen,) = prompts(llm)
    assert seen.startswith("[the user sent a document, saved as inbox/harbours.csv: CSV")
    assert "Blakeney,1.9" in seen and '<untrusted source="document">' in seen
    box = seeing.rt.settings.home / "workspaces" / matrix_user(seeing) / "inbox"
    assert (box / "harbours.csv").read_bytes() == CSV


def test_a_file_declared_over_the_cap_is_refused_unread_and_nothing_stored(seeing, llm):
    mxc = seeing.matrix.add_media(b"%PDF-1.4\n", "application/pdf")
    event = seeing.matrix.media_event(
        "m.file", mxc, "huge.pdf", mimetype="application/pdf", size=BIG
    )
    put(seeing, event)
    seeing.wait(lambda: seeing.matrix.sent(ROOM))
    (answer,) = seeing.matrix.sent(ROOM)
    assert answer == (
        "I could not take that file: it is 21.0 MB, over the 20 MB limit. Nothing was saved."
    )
    assert seeing.matrix.media_requests == [] and count(seeing) == 0 and llm.requests == []


def test_a_file_larger_than_declared_is_cut_off_while_streaming(seeing, llm):
    mxc = seeing.matrix.add_media(b"a,b\n" + b"1,2\n" * (BIG // 4), "text/csv", chunked=True)
    event = seeing.matrix.media_event(
        "m.file", mxc, "read this", filename="huge.csv", mimetype="text/csv", size=100
    )
    put(seeing, event)
    seeing.wait(lambda: seeing.matrix.sent(ROOM))
    (seen,) = prompts(llm)
    assert seen.startswith("read this\n\n[the user sent 'huge.csv', which was not saved: it is 20.")
    assert seen.endswith("MB, over the 20 MB limit]")
    assert not (seeing.rt.settings.home / "workspaces" / matrix_user(seeing) / "inbox").exists()


def test_an_oversized_image_is_refused_with_a_clear_answer(seeing, llm):
    big = make_png(noise=21 * 1024 * 1024)
    mxc = seeing.matrix.add_media(big, "image/png", chunked=True)
    put(seeing, seeing.matrix.media_event("m.image", mxc, "photo.png", mimetype="image/png"))
    seeing.wait(lambda: seeing.matrix.sent(ROOM))
    (answer,) = seeing.matrix.sent(ROOM)
    assert answer.startswith("I could not take your image: it is 20.")
    assert "MB, over the 20 MB limit" in answer
    assert answer.endswith("Nothing was saved.") and llm.requests == []
    keys = seeing.rt.store.objects.list(matrix_user(seeing), "images/")
    assert keys == []


def test_media_on_another_server_is_fetched_through_irises_own_homeserver(seeing, llm):
    """A federated room's file: Iris asks its own homeserver (which fetches it over
    federation), never the other server."""
    mxc = seeing.matrix.add_media(CSV, "text/csv", server="elsewhere.example:8448")
    event = seeing.matrix.media_event("m.file", mxc, "harbours.csv", filename="harbours.csv",
                                      mimetype="text/csv", size=len(CSV))
    put(seeing, event)
    seeing.wait(lambda: seeing.matrix.sent(ROOM))
    (seen,) = prompts(llm)
    assert "Blakeney,1.9" in seen and '<untrusted source="document">' in seen
    (asked,) = seeing.matrix.media_requests
    assert asked.startswith("elsewhere.example:8448/")


def test_media_the_homeserver_cannot_fetch_is_named_to_the_model_and_not_saved(seeing, llm):
    seeing.matrix.unreachable.add("gone.example")
    mxc = seeing.matrix.add_media(CSV, "text/csv", server="gone.example")
    put(seeing, seeing.matrix.media_event("m.file", mxc, "notes.csv", mimetype="text/csv"))
    seeing.wait(lambda: seeing.matrix.sent(ROOM))
    (seen,) = prompts(llm)  # the model is told, as for any file that could not be fetched
    assert seen == ("[the user sent 'notes.csv', which was not saved: the file could not be "
                    "downloaded (HTTP 502)]")
    box = seeing.rt.settings.home / "workspaces" / matrix_user(seeing) / "inbox"
    assert not box.exists() or list(box.iterdir()) == []


def test_encrypted_files_and_other_kinds_get_a_short_answer(seeing, llm):
    mxc = seeing.matrix.add_media(CSV, "text/csv")
    secret = seeing.matrix.media_event("m.file", mxc, "notes.csv", encrypted=True)
    put(seeing, secret)
    seeing.wait(lambda: seeing.matrix.sent(ROOM))
    video = seeing.matrix.media_event("m.video", mxc, "clip.mp4", mimetype="video/mp4")
    put(seeing, video, txn="t2")
    seeing.wait(lambda: len(seeing.matrix.sent(ROOM)) == 2)
    assert seeing.matrix.sent(ROOM) == [ENCRYPTED, OTHER_KINDS]
    assert seeing.matrix.media_requests == [] and count(seeing) == 0 and llm.requests == []


def test_the_media_endpoint_wants_the_token_and_knows_its_media(seeing):
    import httpx

    mxc = seeing.matrix.add_media(CSV, "text/csv")
    base = seeing.rt.settings.matrix_homeserver_url
    path = f"{base}/_matrix/client/v1/media/download/{mxc.removeprefix('mxc://')}"
    bare = httpx.get(path)
    assert (bare.status_code, bare.json()["errcode"]) == (401, "M_MISSING_TOKEN")
    headers = {"Authorization": f"Bearer {MATRIX_AS_TOKEN}"}
    missing = httpx.get(path[:-4] + "0000", headers=headers)
    assert (missing.status_code, missing.json()["errcode"]) == (404, "M_NOT_FOUND")
    assert asyncio.run(seeing.rt.senders["matrix"].download(mxc)) == CSV
    from core.intake.documents import DocumentRefused

    with pytest.raises(DocumentRefused, match="HTTP 404"):
        asyncio.run(seeing.rt.senders["matrix"].download(mxc[:-4] + "0000"))


def test_a_voice_message_is_transcribed_and_answered(iris_home):
    whisper = FakeWhisper(text="what is the tide today")
    with (
        serve(whisper.app) as server,
        platform_stack(
            iris_home,
            IRIS_TRANSCRIPTION_MODEL="openai/whisper-1",
            IRIS_TRANSCRIPTION_API_BASE=f"{server.url}/v1",
            IRIS_TRANSCRIPTION_API_KEY="sk-t",
        ) as s,
    ):
        mxc = s.matrix.add_media(b"OggS-fake-audio", "audio/ogg")
        event = s.matrix.media_event("m.audio", mxc, "Voice message", mimetype="audio/ogg")
        event["content"]["org.matrix.msc3245.voice"] = {}
        put(s, event)
        s.wait(lambda: s.matrix.sent(ROOM))
        assert s.model.seen == ["[voice note] what is the tide today"]
        assert [upload[2] for upload in whisper.uploads] == [b"OggS-fake-audio"]
