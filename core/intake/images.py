"""Images sent to Iris on any platform: checked by their bytes (PNG, JPEG, GIF or WebP, whatever
type was claimed), size-capped, and stored in the sender's own part of the object store as
``images/<image id>``. Messages keep only ``ImageRef`` (id and type); ``core.intake.vision``
gives the bytes to the model when it is asked.

Where the bytes come from: a ``data:`` URL is decoded; otherwise the platform's sender
``download(ref)`` fetches its file id (Telegram, and any platform whose sender can download);
an ``http(s)`` URL from a platform without one (the HTTP API) is fetched with the
SSRF-safe fetcher of ``core.web`` (private, loopback and metadata addresses refused, every
redirect re-checked, bytes and time capped). One image refused refuses the whole message,
and nothing is stored."""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.ids import new_id
from core.lanes import blocking
from core.messages import Attachment, ImageRef, InboundMessage

if TYPE_CHECKING:
    from core.config import Settings
    from core.contracts.senders import Sender
    from core.store.objects import ObjectStore
    from core.web.fetch import Resolver

log = logging.getLogger("iris.images")

MAX_IMAGES = 8  # per message
PREFIX = "images/"
IMAGE_ID = re.compile(r"img_[0-9a-f]{8,40}")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")


class ImageRefused(ValueError):
    """An image that cannot be taken (not an image, too big, not fetchable): says why."""


class ImageNotFound(LookupError):
    """No image with that id for this user."""


@dataclass(frozen=True)
class TakenImages:
    images: tuple[ImageRef, ...] = ()
    refusal: str | None = None  # set: nothing was stored; this is the reply


def sniff(data: bytes) -> str | None:
    """The image type by its magic bytes, or None when it is none of those Iris takes."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def size_text(count: int) -> str:
    if count >= 1024 * 1024:
        return f"{count / (1024 * 1024):.3g} MB"
    return f"{count / 1024:.3g} KB"


def over_limit(max_bytes: int) -> ImageRefused:
    return ImageRefused(f"it is over the {size_text(max_bytes)} limit for images")


def checked(data: bytes, max_bytes: int) -> str:
    """``data``'s media type, or ImageRefused."""
    if len(data) > max_bytes:
        raise over_limit(max_bytes)
    mime = sniff(data)
    if mime is None:
        raise ImageRefused("it is not a PNG, JPEG, GIF or WebP image")
    return mime


def decode_image_url(url: str, max_bytes: int) -> bytes:
    """The bytes of a ``data:`` URL holding an image (ImageRefused otherwise)."""
    from core.intake.documents import DocumentRefused, decode_data_url

    try:
        # twice the cap here bounds the decoding; the cap itself is checked on the bytes
        _, data = decode_data_url(url, 2 * max_bytes, what="the image's data: URL")
    except DocumentRefused as exc:
        raise ImageRefused(str(exc)) from None
    checked(data, max_bytes)
    return data


def data_url(mime: str, data: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def is_image_attachment(mime: str | None, name: str | None) -> bool:
    """A platform's file that should be taken as an image (its bytes are checked later)."""
    return (mime or "").lower().startswith("image/") or (name or "").lower().endswith(
        IMAGE_SUFFIXES)


def has_images(message: InboundMessage) -> bool:
    return any(a.kind == "image" for a in message.attachments)


def image_key(image_id: str) -> str:
    if not IMAGE_ID.fullmatch(image_id):
        raise ImageNotFound(f"{image_id!r} is not an image id")
    return f"{PREFIX}{image_id}"


async def _bytes_of(attachment: Attachment, platform: str, senders: Mapping[str, Sender],
                    settings: Settings, resolver: Resolver | None) -> bytes:
    ref = attachment.ref
    cap = settings.image_max_bytes
    if ref.startswith("data:"):
        return decode_image_url(ref, cap)
    download = getattr(senders.get(platform), "download", None)
    if download is not None:
        from core.intake.documents import DocumentRefused

        try:
            data: bytes = await download(ref)
        except DocumentRefused as exc:  # the platform's own refusal says why (too big...)
            raise ImageRefused(str(exc)) from None
        return data
    if ref.lower().startswith(("http://", "https://")):
        return await _fetch_url(ref, settings, resolver)
    raise ImageRefused(f"I cannot fetch images from {platform}")


async def _fetch_url(url: str, settings: Settings, resolver: Resolver | None) -> bytes:
    from core.addresses import AddressRefused
    from core.web.fetch import FetchFailed, FetchPolicy, fetch, system_resolver

    policy = FetchPolicy(allow_hosts=frozenset(settings.web_allow_hosts),
                         max_bytes=settings.image_max_bytes, timeout=settings.web_timeout,
                         any_type=True)
    try:
        fetched = await fetch(url, policy, resolver=resolver or system_resolver)
    except AddressRefused as exc:
        raise ImageRefused(f"{exc}; Iris does not fetch local or private addresses") from None
    except FetchFailed as exc:
        raise ImageRefused(f"it could not be fetched: {exc}") from None
    if fetched.truncated:
        raise over_limit(settings.image_max_bytes)
    return fetched.body


async def take_images(
    message: InboundMessage, user_id: str, *, objects: ObjectStore,
    senders: Mapping[str, Sender], settings: Settings, resolver: Resolver | None = None,
) -> TakenImages:
    """Fetch and check every image of ``message``, then store them all for ``user_id``; the
    first one refused refuses them all (nothing is stored) with a reply saying why."""
    wanted = [a for a in message.attachments if a.kind == "image"]
    if len(wanted) > MAX_IMAGES:
        return TakenImages(refusal=f"I take at most {MAX_IMAGES} images in one message; "
                           "nothing was saved.")
    checked_images: list[tuple[str, bytes]] = []
    for number, attachment in enumerate(wanted, start=1):
        which = f"image {number}" if len(wanted) > 1 else "your image"
        try:
            data = await _bytes_of(attachment, message.platform, senders, settings, resolver)
            checked_images.append((checked(data, settings.image_max_bytes), data))
        except ImageRefused as exc:
            return TakenImages(refusal=f"I could not take {which}: {exc}. Nothing was saved.")
        except Exception as exc:
            log.warning("image %d of %s could not be fetched: %s", number, message.platform, exc)
            return TakenImages(refusal=f"I could not take {which}: it could not be downloaded "
                               f"({type(exc).__name__}). Nothing was saved.")
    refs = []
    for mime, data in checked_images:
        image_id = new_id("img")
        await blocking("io", user_id, objects.put, user_id, image_key(image_id), data,
                       if_none_match=True, what="storing the image")
        refs.append(ImageRef(id=image_id, mime_type=mime))
    return TakenImages(images=tuple(refs))


def load_image(objects: ObjectStore, user_id: str, image_id: str) -> tuple[str, bytes]:
    """(media type, bytes) of ``user_id``'s image ``image_id``; ImageNotFound for any other
    user's id, a malformed id or a deleted image."""
    from core.store.objects_base import ObjectNotFound

    try:
        data = objects.get(user_id, image_key(image_id)).data
    except ObjectNotFound:
        raise ImageNotFound(f"no image {image_id!r} for this user") from None
    mime = sniff(data)
    if mime is None:
        raise ImageNotFound(f"image {image_id!r} is not readable")
    return mime, data
