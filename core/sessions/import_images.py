"""Images of imported messages: checked as live intake checks them (``core.intake.images``: the
bytes decide the type, PNG/JPEG/GIF/WebP only, ``image_max_bytes``, at most ``MAX_IMAGES`` a
message) and stored in the importing user's own ``images/`` like any image a user sends.

An import is offline bulk data, so it never fetches anything: an ``http(s)`` image URL is not
imported, and neither is an image that fails the checks; each is named in the import report with
its reason while the message's text is imported unchanged. An image keeps the id it had in the
file when that id is free for the user (or holds the same bytes), so an ``iris`` export
re-imports with the same references; otherwise it gets an id derived from the user and its bytes.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.intake.images import (
    IMAGE_ID,
    MAX_IMAGES,
    ImageNotFound,
    ImageRefused,
    checked,
    decode_image_url,
    image_key,
    load_image,
)
from core.messages import ImageRef

if TYPE_CHECKING:
    from core.store.objects import ObjectStore

log = logging.getLogger("iris.sessions")


@dataclass(frozen=True)
class Incoming:
    """One image as the file gives it: its bytes (checked) or only an id, with the file's id."""

    file_id: str | None
    mime: str | None = None
    data: bytes | None = None


@dataclass(frozen=True)
class Dropped:
    number: int  # 1-based among the message's images
    reason: str
    kind: str  # "url" (not fetched), "refused" (failed the checks), "missing" (no bytes)


@dataclass(frozen=True)
class MessageImages:
    """A message's images after the checks, before anything is written."""

    wanted: tuple[tuple[int, Incoming], ...] = ()
    dropped: tuple[Dropped, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.wanted or self.dropped)


@dataclass
class Written:
    """Objects this import created, so a failed import can take them away again."""

    keys: list[tuple[str, str]] = field(default_factory=list)

    def undo(self, objects: ObjectStore) -> None:
        for user_id, key in reversed(self.keys):
            try:
                objects.delete(user_id, key)
            except Exception as exc:  # best effort: the import's own error is what is raised
                log.warning("could not delete %s of %s after a failed import: %s",
                            key, user_id, exc)


def check_images(sources: list[tuple[str | None, str | None]], max_bytes: int) -> MessageImages:
    """Check a message's images, given as (url, file id) pairs; nothing is fetched or stored."""
    if not sources:
        return MessageImages()
    if len(sources) > MAX_IMAGES:
        reason = (f"the message has {len(sources)} images and at most {MAX_IMAGES} are taken in "
                  "one message (as for live messages)")
        return MessageImages(dropped=tuple(Dropped(n, reason, "refused")
                                           for n in range(1, len(sources) + 1)))
    wanted: list[tuple[int, Incoming]] = []
    dropped: list[Dropped] = []
    for number, (url, file_id) in enumerate(sources, start=1):
        if file_id is not None and not IMAGE_ID.fullmatch(file_id):
            file_id = None  # not an id Iris would give; a fresh one is derived
        if url is None or not url.strip():
            if file_id is None:
                dropped.append(Dropped(number, "it has neither image data nor an image id",
                                       "refused"))
            else:
                wanted.append((number, Incoming(file_id)))
            continue
        url = url.strip()
        if url.lower().startswith(("http://", "https://")):
            dropped.append(Dropped(number, "an http(s) URL is never fetched by an import", "url"))
            continue
        if not url.lower().startswith("data:"):
            dropped.append(Dropped(number, "it is not a data: URL", "refused"))
            continue
        try:
            data = decode_image_url(url, max_bytes)
            wanted.append((number, Incoming(file_id, checked(data, max_bytes), data)))
        except ImageRefused as exc:
            dropped.append(Dropped(number, str(exc), "refused"))
    return MessageImages(tuple(wanted), tuple(dropped))


def derived_id(user_id: str, data: bytes) -> str:
    return "img_" + hashlib.sha256(user_id.encode() + b"\0" + data).hexdigest()[:32]


def _same_bytes(objects: ObjectStore, user_id: str, image_id: str, data: bytes) -> bool:
    from core.store.objects_base import ObjectNotFound

    try:
        return objects.get(user_id, image_key(image_id)).data == data
    except ObjectNotFound:
        return False


def _put(objects: ObjectStore, user_id: str, image_id: str, data: bytes,
         written: Written) -> bool:
    """Store ``data`` as ``image_id`` unless it is there already; False if a different image
    holds that id."""
    from core.store.objects_base import PreconditionFailed

    key = image_key(image_id)
    try:
        objects.put(user_id, key, data, if_none_match=True)
    except PreconditionFailed:
        return _same_bytes(objects, user_id, image_id, data)
    written.keys.append((user_id, key))
    return True


@dataclass(frozen=True)
class Kept:
    refs: tuple[ImageRef, ...]
    dropped: tuple[Dropped, ...]

    def json(self) -> str | None:
        from core.messages import Message

        return Message(role="user", content="", images=self.refs).images_json()


def store_images(checked_images: MessageImages, user_id: str, objects: ObjectStore,
                 written: Written) -> Kept:
    """Store the message's checked images for ``user_id`` (ids of images it already has are
    linked; an id it does not have, without bytes, is dropped)."""
    refs: list[ImageRef] = []
    dropped = list(checked_images.dropped)
    for number, image in checked_images.wanted:
        if image.data is None:
            assert image.file_id is not None
            try:
                mime, _ = load_image(objects, user_id, image.file_id)
            except ImageNotFound:
                dropped.append(Dropped(number, f"the file has no bytes for {image.file_id} and "
                                       "this user has no such image", "missing"))
                continue
            refs.append(ImageRef(id=image.file_id, mime_type=mime))
            continue
        assert image.mime is not None
        image_id = image.file_id
        if image_id is None or not _put(objects, user_id, image_id, image.data, written):
            image_id = derived_id(user_id, image.data)
            if not _put(objects, user_id, image_id, image.data, written):
                raise RuntimeError(f"image {image_id} of user {user_id} holds other bytes")
        refs.append(ImageRef(id=image_id, mime_type=image.mime))
    return Kept(tuple(refs), tuple(sorted(dropped, key=lambda d: d.number)))
