"""Images in, end to end over real HTTP: the openai client → the emulator → litellm → a scripted
model. Images arrive as ``data:`` URLs or URLs served on loopback, are stored per user by their
bytes, reach a vision model as image parts (again on later turns), go through vision_analyze
for a model that cannot see, and are refused (nothing stored, no model call) when they are not
images, too big or at a private address."""

import json

import openai
import pytest

from core.sessions.transfer import export_sessions
from iris_testing.images import ImageSite, as_data_url, make_png
from iris_testing.llm_server import ScriptedLLM
from iris_testing.server import serve
from tests.fakes.stack import emulator_stack

PNG = make_png(3, 2)


@pytest.fixture
def llm():
    return ScriptedLLM()


@pytest.fixture
def site():
    images = ImageSite()
    with serve(images.app) as server:
        yield images, server


def image_message(text, *urls):
    parts = [{"type": "text", "text": text}] if text else []
    parts += [{"type": "image_url", "image_url": {"url": url}} for url in urls]
    return [{"role": "user", "content": parts}]


def ask(stack, text, *urls, user="alice"):
    answer = stack.client.chat.completions.create(
        model="iris", user=user, messages=image_message(text, *urls))
    return answer.choices[0].message.content


def stored_images(rt, account):
    user = rt.store.users.resolve(account)
    return {} if user is None else {
        key: rt.store.objects.get(user, key).data for key in rt.store.objects.list(user, "images/")}


def image_parts(request):
    content = request["messages"][-1]["content"]
    return [p["image_url"]["url"] for p in content if p["type"] == "image_url"]


def test_a_data_url_image_reaches_the_model_and_stays_in_the_session(llm, monkeypatch):
    with emulator_stack(llm, monkeypatch, IRIS_MODEL_VISION="true") as stack:
        rt = stack.runtime
        llm.reply("A red rectangle.").reply("Still red.")
        assert ask(stack, "What is this?", as_data_url(PNG, "image/jpeg")) == "A red rectangle."
        first = llm.requests[0]["messages"][-1]["content"]
        assert first == [{"type": "text", "text": "What is this?"},
                         {"type": "image_url", "image_url": {"url": as_data_url(PNG)}}]
        (key, data), = stored_images(rt, "http:alice").items()
        assert data == PNG and key.startswith("images/img_")
        alice = rt.store.users.resolve("http:alice")
        row = rt.store.db.one("SELECT content, images FROM messages WHERE user_id = ? AND"
                              " role = 'user'", (alice,))
        assert row["content"] == "What is this?"  # the row holds a reference, not the bytes
        assert json.loads(row["images"]) == [{"id": key.removeprefix("images/"),
                                              "mime_type": "image/png"}]

        assert ask(stack, "And the colour?") == "Still red."
        history = llm.requests[1]["messages"]
        earlier = [m for m in history if m["role"] == "user" and isinstance(m["content"], list)]
        assert [p for p in earlier[0]["content"] if p["type"] == "image_url"] == [
            {"type": "image_url", "image_url": {"url": as_data_url(PNG)}}]

        (record,) = export_sessions(rt.store, [alice], fmt="iris")
        exported = [m for m in record["messages"] if m.get("images")]
        assert exported[0]["images"] == [{"id": key.removeprefix("images/"),
                                          "mime_type": "image/png",
                                          "data_url": as_data_url(PNG)}]
        (openai_record,) = export_sessions(rt.store, [alice], fmt="openai-jsonl")
        assert any(isinstance(m["content"], list) for m in openai_record["messages"])


def test_only_the_newest_images_are_shown_again(llm, monkeypatch):
    with emulator_stack(llm, monkeypatch, IRIS_MODEL_VISION="true",
                        IRIS_IMAGES_IN_PROMPT="1") as stack:
        llm.reply("One.").reply("Two.")
        ask(stack, "first", as_data_url(make_png(1, 1)))
        ask(stack, "second", as_data_url(make_png(2, 1)))
        users = [m for m in llm.requests[1]["messages"] if m["role"] == "user"]
        assert users[0]["content"].startswith("first\n[an earlier image, img_")
        assert "not shown again to keep the prompt small]" in users[0]["content"]
        assert image_parts(llm.requests[1]) == [as_data_url(make_png(2, 1))]


def test_an_image_url_on_loopback_is_refused_until_allowed(llm, site, monkeypatch):
    images, server = site
    images.put("cat.png", PNG, claimed="application/octet-stream")
    url = f"{server.url}/go/cat.png"
    with emulator_stack(llm, monkeypatch, IRIS_MODEL_VISION="true") as stack:
        rt = stack.runtime
        reply = ask(stack, "Look", url)
        assert reply.startswith("I could not take your image: 127.0.0.1 is a loopback address")
        assert reply.endswith("Nothing was saved.")
        assert llm.requests == [] and images.hits == [] and stored_images(rt, "http:alice") == {}

        rt.settings = rt.settings.model_copy(
            update={"web_allow_hosts": [f"127.0.0.1:{server.port}"]})
        llm.reply("A cat, apparently.")
        assert ask(stack, "Look", url) == "A cat, apparently."
        assert images.hits == ["/go/cat.png", "/cat.png"]
        assert image_parts(llm.requests[0]) == [as_data_url(PNG)]  # the bytes, not the URL
        assert list(stored_images(rt, "http:alice").values()) == [PNG]


def test_not_images_and_oversized_images_are_refused_and_nothing_is_stored(
        llm, site, monkeypatch):
    images, server = site
    images.put("page.png", b"<html><body>not a picture</body></html>")
    images.put("big.png", make_png(noise=5000))
    with emulator_stack(llm, monkeypatch, IRIS_MODEL_VISION="true", IRIS_IMAGE_MAX_BYTES="4096",
                        IRIS_WEB_ALLOW_HOSTS=f"127.0.0.1:{server.port}") as stack:
        rt = stack.runtime
        with pytest.raises(openai.BadRequestError, match="it is over the 4 KB limit for images"):
            ask(stack, "big", as_data_url(make_png(noise=5000)))
        with pytest.raises(openai.BadRequestError, match="not a PNG, JPEG, GIF or WebP image"):
            ask(stack, "fake", as_data_url(b"GIF-ish but not really", "image/gif"))
        assert "is not a PNG, JPEG, GIF or WebP image. Nothing was saved." in ask(
            stack, "page", f"{server.url}/page.png")
        assert "over the 4096-byte limit" in ask(stack, "big", f"{server.url}/big.png")
        assert "over the 4096-byte limit" in ask(
            stack, "both", as_data_url(PNG), f"{server.url}/big.png")  # one refused: none kept
        assert llm.requests == []
        assert stored_images(rt, "http:alice") == {}
        assert rt.store.db.scalar("SELECT count(*) FROM messages") == 0


def vision_script(llm, answers, model="scripted-vision"):
    """The main model (no vision) asks vision_analyze about the image id its prompt names; the
    vision model (``model``) answers ``answers``."""

    def handler(body):
        if body["model"] == model:
            return answers
        last = body["messages"][-1]
        if last["role"] == "tool":
            return f"Tool said: {last['content']}"
        text = last["content"]
        image_id = text.split("image_id ", 1)[1].split(":", 1)[0] if "image_id " in text else (
            text.rsplit(" ", 1)[-1])
        return {"tool_calls": [{"name": "vision_analyze",
                                "arguments": {"image_id": image_id, "question": "What is it?"}}]}

    llm.handler = handler


def test_a_model_that_cannot_see_asks_the_vision_model(llm, monkeypatch):
    with emulator_stack(llm, monkeypatch, IRIS_MODEL_VISION="false",
                        IRIS_VISION_MODEL="openai/scripted-vision") as stack:
        vision_script(llm, "A red rectangle on white.")
        reply = ask(stack, "What is in this picture?", as_data_url(PNG))
        main, vision, final = llm.requests
        assert main["messages"][-1]["content"].startswith(
            "What is in this picture?\n[the user sent an image, image_id img_")
        assert "vision_analyze" in main["messages"][-1]["content"]
        assert vision["model"] == "scripted-vision"
        assert image_parts(vision) == [as_data_url(PNG)]
        assert final["model"] == "scripted-model"
        assert "A red rectangle on white." in reply
        assert '<untrusted source="vision_analyze">' in reply

        alice_id = next(iter(stored_images(stack.runtime, "http:alice"))).removeprefix("images/")
        reply = ask(stack, f"Describe {alice_id}", user="bob")
        assert f"no image '{alice_id}' for this user" in reply
        assert [r["model"] for r in llm.requests[3:]] == ["scripted-model", "scripted-model"]


def test_with_no_way_to_see_the_user_is_told_plainly(llm, monkeypatch):
    with emulator_stack(llm, monkeypatch, IRIS_MODEL_VISION="false") as stack:
        rt = stack.runtime
        reply = ask(stack, "", as_data_url(PNG))
        assert reply.startswith("This model (openai/scripted-model) cannot see images")
        assert llm.requests == [] and stored_images(rt, "http:alice") == {}

        llm.reply("I cannot see images, but hello.")
        ask(stack, "Hello, and look at this", as_data_url(PNG))
        assert llm.requests[0]["messages"][-1]["content"] == (
            "Hello, and look at this\n\n[the user also sent an image, which this model cannot "
            "see and which was not kept; tell the user so plainly]")
        assert "vision_analyze" not in json.dumps(llm.requests[0].get("tools", []))
        assert stored_images(rt, "http:alice") == {}


def test_the_vision_models_calls_are_counted_in_usage(llm, monkeypatch):
    """vision_analyze's model call is recorded like any other: its tokens and cost, under the
    vision model's name, for the user and the message that asked, and in /usage."""
    vision_model = "openai/gpt-4o-mini"  # priced in litellm's cost map: the cost is known
    with emulator_stack(llm, monkeypatch, IRIS_MODEL_VISION="false",
                        IRIS_VISION_MODEL=vision_model) as stack:
        rt = stack.runtime
        vision_script(llm, "A red rectangle on white.", model="gpt-4o-mini")
        assert "A red rectangle on white." in ask(stack, "What is this?", as_data_url(PNG))
        alice = rt.store.users.resolve("http:alice")
        (entry,) = rt.store.db.query("SELECT id FROM inbox WHERE user_id = ?", (alice,))
        rows = {u.model: u for u in rt.store.usage.for_inbox(alice, entry["id"])}
        assert set(rows) == {"openai/scripted-model", vision_model}
        vision = rows[vision_model]
        assert vision.calls == 1 and vision.prompt_tokens > 0 and vision.completion_tokens > 0
        assert vision.cost_usd is not None and vision.cost_usd > 0
        assert rows["openai/scripted-model"].calls == 2
        assert rt.store.usage.by_model(alice)[vision_model].calls == 1

        shown = ask(stack, "/usage")
        prompt = sum(u.prompt_tokens for u in rows.values())
        completion = sum(u.completion_tokens for u in rows.values())
        cost = sum(u.cost_usd or 0.0 for u in rows.values())
        assert prompt > rows["openai/scripted-model"].prompt_tokens  # the vision call's too
        assert shown.startswith(f"This session: 3 model calls, {prompt} prompt + {completion} "
                                f"completion tokens, ${cost:.4f}"), shown
        bob_usage = ask(stack, "/usage", user="bob")
        assert "All time: 0 model calls" in bob_usage
