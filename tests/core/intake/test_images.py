"""Images by their bytes, per user: the type sniffing table, the id rules that keep one user's
images from another, and what the model is shown for images it cannot have."""

import asyncio

import pytest

from core.intake.images import ImageNotFound, ImageRefused, checked, image_key, load_image, sniff
from core.intake.vision import show_images
from core.messages import ImageRef, Message
from iris_testing.images import make_png

PNG = make_png()


@pytest.mark.parametrize(("data", "mime"), [
    (PNG, "image/png"),
    (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00", "image/jpeg"),
    (b"GIF87a\x01\x00\x01\x00", "image/gif"),
    (b"GIF89a\x01\x00\x01\x00", "image/gif"),
    (b"RIFF\x24\x00\x00\x00WEBPVP8 ", "image/webp"),
    (b"RIFF\x24\x00\x00\x00WAVEfmt ", None),  # a RIFF file, but sound
    (b"<svg xmlns='http://www.w3.org/2000/svg'/>", None),  # SVG is script-capable XML
    (b"<html><img src=x></html>", None),
    (b"%PDF-1.7", None),
    (b"\x89PNG", None),  # a truncated signature
    (b"", None),
])
def test_the_type_comes_from_the_bytes(data, mime):
    assert sniff(data) == mime


def test_size_and_type_are_checked():
    assert checked(PNG, len(PNG)) == "image/png"
    with pytest.raises(ImageRefused, match="over the 1 KB limit"):
        checked(make_png(noise=2000), 1024)
    with pytest.raises(ImageRefused, match="not a PNG, JPEG, GIF or WebP"):
        checked(b"just text", 1024)


@pytest.mark.parametrize("image_id", ["../img_0123456789", "img_0123456789/../../x", "img_",
                                      "IMG_0123456789", "img_0123456789abcdef\n", "x"])
def test_malformed_ids_name_no_object(image_id):
    with pytest.raises(ImageNotFound):
        image_key(image_id)


def test_one_users_image_is_unknown_to_another(store):
    store.objects.put("usr_a", image_key("img_0123456789ab"), PNG)
    assert load_image(store.objects, "usr_a", "img_0123456789ab") == ("image/png", PNG)
    with pytest.raises(ImageNotFound, match="no image 'img_0123456789ab' for this user"):
        load_image(store.objects, "usr_b", "img_0123456789ab")


def test_images_beyond_the_limit_or_gone_become_notes(store, settings):
    store.objects.put("usr_a", image_key("img_00000000000a"), PNG)
    store.objects.put("usr_a", image_key("img_00000000000b"), PNG)
    convo = [
        Message(role="user", content="old", images=(ImageRef(id="img_00000000000a",
                                                             mime_type="image/png"),)),
        Message(role="user", content="new", images=(ImageRef(id="img_00000000000b",
                                                             mime_type="image/png"),)),
        Message(role="user", content="", images=(ImageRef(id="img_0000000000ff",
                                                          mime_type="image/png"),)),
    ]
    limited = settings.model_copy(update={"images_in_prompt": 1})
    shown = asyncio.run(show_images(convo, store, "usr_a", limited, "sees"))
    assert shown[0].content == ("old\n[an earlier image, img_00000000000a, not shown again to "
                                "keep the prompt small]")
    assert shown[0].images == ()
    assert shown[2].content == "[image img_0000000000ff is no longer stored]"  # not counted
    assert shown[1].to_openai()["content"][1]["image_url"]["url"].startswith(
        "data:image/png;base64,")
    assert convo[1].images[0].url is None  # the stored message is never given the bytes
