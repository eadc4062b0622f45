"""Telegram photos and image documents, end to end: the webhook → getFile and the file download
on the Bot API fake → the user's object store → litellm → the scripted model's request."""

import pytest

from core.model.llm import LiteLLMModel
from iris_testing.images import as_data_url, make_png
from iris_testing.llm_server import ScriptedLLM
from iris_testing.platform_stack import platform_stack
from iris_testing.server import serve

SMALL, LARGE = make_png(1, 1), make_png(8, 6)


@pytest.fixture
def llm():
    scripted = ScriptedLLM()
    with serve(scripted.app) as server:
        yield scripted, LiteLLMModel(name="openai/scripted-model", api_base=f"{server.url}/v1",
                                     api_key="sk-scripted", retries=0)


def photo_update(stack, caption=None):
    stack.telegram.add_file("ph-s", SMALL, "photos/file_0.jpg")
    stack.telegram.add_file("ph-l", LARGE, "photos/file_1.jpg")
    update = stack.telegram.make_update(None)
    update["message"]["photo"] = [
        {"file_id": "ph-s", "file_unique_id": "u-s", "width": 90, "height": 67,
         "file_size": len(SMALL)},
        {"file_id": "ph-l", "file_unique_id": "u-l", "width": 1280, "height": 960,
         "file_size": len(LARGE)}]
    if caption is not None:
        update["message"]["caption"] = caption
    return update


def image_urls(request):
    content = request["messages"][-1]["content"]
    return [p["image_url"]["url"] for p in content if p["type"] == "image_url"]


def test_a_telegram_photo_reaches_the_model_as_an_image_part(iris_home, llm):
    scripted, model = llm
    scripted.reply("A small red picture.").reply("A bigger one.")
    with platform_stack(iris_home, model=model, IRIS_MODEL_VISION="true") as stack:
        assert stack.telegram_post(photo_update(stack, "What is this?")).json()["status"] == (
            "recorded")
        stack.wait(lambda: stack.telegram.sent_messages(4242), timeout=60)
        (request,) = scripted.requests
        assert request["messages"][-1]["content"][0] == {"type": "text", "text": "What is this?"}
        assert image_urls(request) == [as_data_url(LARGE)]  # the largest size, as its bytes
        user = stack.rt.store.users.resolve("telegram:4242")
        keys = stack.rt.store.objects.list(user, "images/")
        assert [stack.rt.store.objects.get(user, k).data for k in keys] == [LARGE]

        stack.telegram.add_file("doc-img", SMALL, "documents/scan.png")
        update = stack.telegram.make_update(None)
        update["message"]["document"] = {"file_id": "doc-img", "file_unique_id": "u-d",
                                         "file_name": "scan.png", "mime_type": "image/png"}
        stack.telegram_post(update)
        stack.wait(lambda: len(stack.telegram.sent_messages(4242)) == 2, timeout=60)
        assert image_urls(scripted.requests[1])[-1] == as_data_url(SMALL)
        assert not (stack.rt.settings.home / "workspaces" / user / "inbox").exists()


def test_a_telegram_file_claiming_to_be_an_image_is_refused(iris_home, llm):
    scripted, model = llm
    with platform_stack(iris_home, model=model, IRIS_MODEL_VISION="true") as stack:
        stack.telegram.add_file("doc-x", b"MZ\x90\x00 not an image", "documents/x.png")
        update = stack.telegram.make_update(None)
        update["message"]["document"] = {"file_id": "doc-x", "file_unique_id": "u-x",
                                         "file_name": "x.png", "mime_type": "image/png"}
        update["message"]["caption"] = "look"
        stack.telegram_post(update)
        stack.wait(lambda: stack.telegram.sent_messages(4242), timeout=60)
        text = stack.telegram.sent_messages(4242)[0]["text"]
        assert "it is not a PNG, JPEG, GIF or WebP image" in text and "Nothing was saved" in text
        assert scripted.requests == []
        user = stack.rt.store.users.resolve("telegram:4242")
        assert stack.rt.store.objects.list(user, "images/") == []
