"""An image sent on WhatsApp, Slack or email reaches a model that can see as an image part:
the platforms' media parsing and downloads (core/platforms/media.py and the senders) joined
with the image intake (core/intake/images.py), through real HTTP against the platform fakes."""

import pytest

from iris_testing.images import as_data_url, make_png
from iris_testing.llm_server import ScriptedLLM
from iris_testing.mail_inbound import mailgun_files, mailgun_form
from iris_testing.platform_stack import MAILGUN_KEY
from tests.functions.test_media_in import ADA, media_stack, slack_files

PNG = make_png()


@pytest.fixture
def llm():
    scripted = ScriptedLLM()
    scripted.handler = lambda body: "A picture."
    return scripted


@pytest.fixture
def stack(iris_home, llm):
    with media_stack(iris_home, llm, IRIS_MODEL_VISION="true") as running:
        yield running


def seen_images(llm):
    (request,) = llm.requests
    content = request["messages"][-1]["content"]
    assert isinstance(content, list), content
    return [p["image_url"]["url"] for p in content if p["type"] == "image_url"]


def test_a_whatsapp_image_reaches_the_model(stack, llm):
    payload = stack.whatsapp.media_message("image", "903", PNG, "image/png", caption="look")
    assert stack.whatsapp_post(payload).json()["statuses"] == ["recorded"]
    stack.wait(lambda: stack.whatsapp.sent(ADA))
    assert seen_images(llm) == [as_data_url(PNG)]


def test_a_slack_image_reaches_the_model(stack, llm):
    assert slack_files(stack, ("photo.png", PNG, "image/png"), text="look").status_code == 200
    stack.wait(lambda: stack.slack.posted("D123"))
    assert seen_images(llm) == [as_data_url(PNG)]


def test_a_mailed_image_reaches_the_model(stack, llm):
    files = [("photo.png", PNG, "image/png")]
    form = mailgun_form("See the photo.", key=MAILGUN_KEY, attachment_count=len(files))
    assert stack.mailgun_post(form, attachments=mailgun_files(files)).json()["status"] == \
        "recorded"
    stack.wait(stack.mails)
    assert seen_images(llm) == [as_data_url(PNG)]
