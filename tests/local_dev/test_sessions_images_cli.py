"""Images survive `iris sessions export` → `iris sessions import` through the real CLI, on a
libsql file and on a local or S3 (moto over HTTP) object store: same bytes, same references,
walled off per user, a second import adds nothing, and an image that cannot be taken is named
with its reason while its message's text is imported."""

import base64
import json

import pytest
from click.testing import CliRunner

from core.config import load_settings
from core.intake.images import ImageNotFound, image_key, load_image
from core.messages import ImageRef, Message
from core.store import open_store
from iris_testing.images import as_data_url, make_png
from local_dev.cli import cli

PNG = make_png(3, 2)
GIF = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00;"


def iris(*args):
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(params=["local", "s3"])
def homes(request, tmp_path, monkeypatch):
    """Switch between two Iris homes (each its own libsql file and object store)."""
    bucket = request.getfixturevalue("s3_bucket") if request.param == "s3" else None
    if bucket:
        monkeypatch.setenv("IRIS_S3_ENDPOINT_URL", request.getfixturevalue("moto_s3").endpoint_url)

    def use(name):
        home = tmp_path / name
        home.mkdir(mode=0o700, exist_ok=True)
        monkeypatch.setenv("IRIS_HOME", str(home))
        if bucket:
            monkeypatch.setenv("IRIS_OBJECTS_URL", f"s3://{bucket}/{name}")
        return home

    return use


def opened():
    return open_store(load_settings())


def live_session_with_images(store):
    """A session as live intake leaves it: images stored under the sender, refs on the message."""
    user = store.users.for_account("telegram:42")
    session = store.sessions.start(user, "telegram:42", "telegram", at=1_700_000_000.0)
    refs = []
    for image_id, data, mime in (("img_00000000000000a1", PNG, "image/png"),
                                 ("img_00000000000000a2", GIF, "image/gif")):
        store.objects.put(user, image_key(image_id), data, if_none_match=True)
        refs.append(ImageRef(id=image_id, mime_type=mime))
    store.messages.insert(user, session.id, [
        Message(role="user", content="what are these?", images=tuple(refs)),
        Message(role="assistant", content="A red box and a dot."),
    ], at=1_700_000_001.0)
    return user, session


def image_objects(store, user):
    return sorted(store.objects.list(user, "images/"))


def test_export_import_round_trip_keeps_image_bytes_and_references(homes, tmp_path):
    homes("a")
    with _Opened() as store:
        owner, session = live_session_with_images(store)
        original = [m.message for m in store.messages.for_session(owner, session.id)]
    exported = tmp_path / "export.jsonl"
    iris("sessions", "export", "-o", str(exported))

    homes("b")
    with _Opened() as store:
        bob = store.users.for_account("telegram:7")  # another user of the new home
    first = iris("sessions", "import", str(exported), "--embed", "none")
    assert "imported 1 sessions (2 messages)" in first.output
    assert "images: 2 stored, 0 not imported" in first.output
    with _Opened() as store:
        user = store.users.resolve("telegram:42")
        [row] = store.transcripts.sessions(user)
        imported = [m.message for m in store.messages.for_session(user, row.session.id)]
        assert imported == original, "same text, same image references"
        assert [load_image(store.objects, user, i.id) for i in imported[0].images] == [
            ("image/png", PNG), ("image/gif", GIF)]
        keys = image_objects(store, user)
        assert keys == ["images/img_00000000000000a1", "images/img_00000000000000a2"]
        for image in imported[0].images:
            with pytest.raises(ImageNotFound):
                load_image(store.objects, bob, image.id)
        assert image_objects(store, bob) == []
        messages = store.db.scalar("SELECT count(*) FROM messages")

    again = iris("sessions", "import", str(exported), "--embed", "none")
    assert "imported 0 sessions (0 messages)" in again.output and "images:" not in again.output
    with _Opened() as store:
        assert image_objects(store, user) == keys
        assert store.db.scalar("SELECT count(*) FROM messages") == messages

    sharegpt = iris("sessions", "export", "--format", "sharegpt").stdout
    human = json.loads(sharegpt.splitlines()[0])["conversations"][0]["value"]
    assert human == ("what are these?\n[image: img_00000000000000a1]\n"
                     "[image: img_00000000000000a2]")


class _Opened:
    def __enter__(self):
        self.store = opened()
        return self.store

    def __exit__(self, *exc):
        self.store.close()


def history(tmp_path, messages, session_id="s1", user="alice"):
    path = tmp_path / f"{session_id}.jsonl"
    path.write_text(json.dumps({"user": user, "session_id": session_id,
                                "started_at": "2024-05-01T10:00:00Z", "messages": messages})
                    + "\n")
    return path


def test_openai_style_image_parts_are_stored_and_urls_never_fetched(homes, tmp_path):
    homes("a")
    path = history(tmp_path, [
        {"role": "user", "id": "m1", "content": [
            {"type": "text", "text": "two pictures"},
            {"type": "image_url", "image_url": {"url": as_data_url(PNG, "image/jpeg")}},
            {"type": "image_url", "image_url": {"url": "http://169.254.169.254/latest/x.png"}},
        ]},
        {"role": "assistant", "content": "One came through."},
    ])
    result = iris("sessions", "import", str(path), "--embed", "none")
    assert "images: 1 stored, 1 not imported (1 http(s) URL not fetched)" in result.output
    assert ("alice session s1 message 1 (id m1): image 2 not imported: an http(s) URL is never "
            "fetched by an import; the message's text was imported") in result.output
    with _Opened() as store:
        user = store.users.resolve("alice")
        first, _ = store.messages.for_session(user, "s1")
        assert first.message.content == "two pictures"
        [ref] = first.message.images
        assert load_image(store.objects, user, ref.id) == ("image/png", PNG)


def test_invalid_images_are_named_and_change_nothing_else(homes, tmp_path, monkeypatch):
    homes("a")
    monkeypatch.setenv("IRIS_IMAGE_MAX_BYTES", "2048")
    big = make_png(2, 2, noise=2500)  # over the cap, under the 2x decoding bound
    path = history(tmp_path, [
        {"role": "user", "content": "a text file", "id": "t1",
         "images": [{"data_url": "data:image/png;base64," + base64.b64encode(b"hello").decode()}]},
        {"role": "user", "content": "too big", "id": "t2",
         "images": [{"data_url": as_data_url(big, "image/png")}]},
        {"role": "user", "content": "broken", "id": "t3",
         "images": [{"data_url": "data:image/png;base64,@@not base64@@"}]},
        {"role": "user", "content": "fine", "id": "t4",
         "images": [{"data_url": as_data_url(PNG, "image/png")}]},
    ])
    result = iris("sessions", "import", str(path), "--embed", "none")
    assert "imported 1 sessions (4 messages)" in result.output
    assert "images: 1 stored, 3 not imported (3 refused by the image checks)" in result.output
    for which, reason in (("t1", "it is not a PNG, JPEG, GIF or WebP image"),
                          ("t2", "over the 2 KB limit"), ("t3", "not valid base64")):
        line = next(x for x in result.output.splitlines() if f"(id {which})" in x)
        assert reason in line and line.endswith("the message's text was imported")
    with _Opened() as store:
        user = store.users.resolve("alice")
        stored = store.messages.for_session(user, "s1")
        assert [m.message.content for m in stored] == ["a text file", "too big", "broken", "fine"]
        assert [len(m.message.images) for m in stored] == [0, 0, 0, 1]
        assert len(image_objects(store, user)) == 1


def test_more_than_eight_images_in_a_message_are_refused_as_live(homes, tmp_path):
    homes("a")
    path = history(tmp_path, [{"role": "user", "content": "many", "images": [
        {"data_url": as_data_url(make_png(1, 1, rgb=(i, 0, 0)), "image/png")} for i in range(9)]}])
    result = iris("sessions", "import", str(path), "--embed", "none")
    assert "images: 0 stored, 9 not imported" in result.output
    assert "at most 8 are taken in one message" in result.output
    with _Opened() as store:
        assert image_objects(store, store.users.resolve("alice")) == []
