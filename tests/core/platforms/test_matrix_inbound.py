"""Reading Matrix room events (core/platforms/matrix_inbound.py): mxc URIs, captions by the spec's
v1.10 rule, what is answered without a turn, and hostile contents."""

import pytest

from core.platforms.matrix_inbound import (
    ENCRYPTED,
    OTHER_KINDS,
    MxEvent,
    parse_event,
    parse_mxc,
)
from iris_testing.matrix_api import BOT, FakeHomeserver

MB = 1024 * 1024
fake = FakeHomeserver(as_token="t")


def parse(event, **kw):
    return parse_event(MxEvent.model_validate(event), bot=BOT, **kw)


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("mxc://example.org/AbC_12-x", ("example.org", "AbC_12-x")),
        ("mxc://example.org:8448/abc", ("example.org:8448", "abc")),
        ("mxc://[::1]:8448/abc", ("[::1]:8448", "abc")),
        ("mxc://example.org/../../_synapse/admin", None),
        ("mxc://example.org/abc?x=1", None),
        ("mxc://example.org/a/b", None),
        ("mxc://user@example.org/abc", None),
        ("https://example.org/abc", None),
        ("mxc:///abc", None),
    ],
)
def test_mxc_uris_are_read_strictly(uri, expected):
    assert parse_mxc(uri) == expected


def test_body_is_the_caption_only_when_a_different_filename_is_given():
    mxc = "mxc://example.org/abc"
    captioned = parse(fake.media_event("m.file", mxc, "see p. 3", filename="r.pdf"))
    assert captioned.message is not None and captioned.message.text == "see p. 3"
    assert captioned.message.attachments[0].name == "r.pdf"
    named = parse(fake.media_event("m.file", mxc, "r.pdf", filename="r.pdf"))
    assert named.message is not None and named.message.text == ""
    assert named.message.attachments[0].name == "r.pdf"
    legacy = parse(fake.media_event("m.file", mxc, "r.pdf", mimetype="application/pdf"))
    assert legacy.message is not None and legacy.message.text == ""
    (attachment,) = legacy.message.attachments
    assert (attachment.kind, attachment.ref, attachment.mime_type, attachment.name) == (
        "file",
        mxc,
        "application/pdf",
        "r.pdf",
    )


def test_an_image_is_an_image_and_a_file_of_an_image_type_too():
    mxc = "mxc://example.org/abc"
    for msgtype, mime in (("m.image", None), ("m.image", "image/jpeg"), ("m.file", "image/png")):
        parsed = parse(fake.media_event(msgtype, mxc, "x", mimetype=mime))
        assert parsed.message is not None and parsed.message.attachments[0].kind == "image"
        assert parsed.reply is None


def test_audio_goes_to_the_voice_path():
    mxc = "mxc://example.org/abc"
    voice = fake.media_event("m.audio", mxc, "Voice message", mimetype="audio/ogg")
    voice["content"]["org.matrix.msc3245.voice"] = {}
    sound = fake.media_event("m.audio", mxc, "song.mp3", mimetype="audio/mpeg")
    kinds = [parse(e).message.attachments[0].kind for e in (voice, sound)]
    assert kinds == ["voice", "audio"]


def test_refusals_are_answered_without_reading():
    ok = "mxc://example.org/abc"
    cases = [
        (fake.media_event("m.file", ok, "x", encrypted=True), ENCRYPTED),
        (fake.media_event("m.video", ok, "clip.mp4"), OTHER_KINDS),
        (fake.media_event("m.location", ok, "here"), OTHER_KINDS),
        (fake.media_event("m.file", "https://evil.example/x", "x"), "no valid mxc://"),
        (fake.media_event("m.file", ok, "x", size=20 * MB + 1), "over the 20 MB limit"),
    ]
    for event, reply in cases:
        parsed = parse(event)
        assert parsed.reply is not None and reply in parsed.reply, (event, parsed.reply)
        assert parsed.message is not None and parsed.message.attachments == ()
    remote = parse(fake.media_event("m.file", "mxc://elsewhere.example/abc", "x"))
    assert remote.reply is None  # read through Iris' homeserver (a federated room's file)
    assert remote.message is not None and len(remote.message.attachments) == 1
    image = fake.media_event("m.image", ok, "x", size=11 * MB)
    assert "over the 10 MB limit" in str(parse(image, image_bytes=10 * MB).reply)
    assert (
        parse(fake.media_event("m.file", ok, "x", size=11 * MB), image_bytes=10 * MB).reply is None
    )


def test_in_a_group_a_file_is_read_when_its_caption_addresses_iris_not_its_name():
    mxc = "mxc://example.org/abc"
    named = fake.media_event("m.file", mxc, "iris-report.pdf", room="!g:example.org")
    assert parse(named, names=("iris",), group=True).message is None
    captioned = fake.media_event(
        "m.file", mxc, "Iris, summarise", filename="iris-report.pdf", room="!g:example.org"
    )
    parsed = parse(captioned, names=("iris",), group=True)
    assert parsed.message is not None and parsed.message.text == "Iris, summarise"
    assert parsed.group_ref == "!g:example.org" and parsed.message.is_group


def test_notices_own_events_and_malformed_contents_are_ignored():
    assert parse(fake.message_event("beep", msgtype="m.notice")).message is None
    assert parse(fake.message_event("echo", sender=BOT)).message is None
    broken = fake.message_event("x")
    broken["content"] = {"msgtype": "m.file", "body": "x", "info": {"size": "huge"}}
    assert parse(broken).message is None
    assert parse(fake.message_event("   ")).message is None
