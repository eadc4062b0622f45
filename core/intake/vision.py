"""How a turn's model gets the images of its conversation.

``sight_of`` decides once per turn: the model ``sees`` (litellm's model info, or
``IRIS_MODEL_VISION``), or it may ask a ``tool`` (``vision_analyze`` with ``IRIS_VISION_MODEL``),
or it is ``blind``. ``show_images`` then fills the newest ``images_in_prompt`` images of the
conversation with ``data:`` URLs (what litellm passes to every provider) and turns older ones
into a one-line note, so a long session does not send every photo again on every turn.
Stored messages never hold the bytes: only ``ImageRef`` ids."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from core.intake.images import ImageNotFound, data_url, has_images, load_image, take_images
from core.lanes import blocking
from core.messages import ImageRef, InboundMessage, Message

if TYPE_CHECKING:
    from collections.abc import Mapping

    from core.config import Settings
    from core.contracts.senders import Sender
    from core.store import Store

Sight = Literal["sees", "tool", "blind"]

BLIND_REPLY = (
    "This model ({model}) cannot see images, so I could not look at yours, and it was not "
    "saved. Tell me in words what it shows, or ask the owner to switch to a model that can see "
    "images or to set IRIS_VISION_MODEL."
)
BLIND_NOTE = ("[the user also sent an image, which this model cannot see and which was not "
              "kept; tell the user so plainly]")


async def sight_of(settings: Settings, model_name: str) -> Sight:
    sees = settings.model_vision
    if sees is None:
        from core.model.routing import sees_images

        sees, _ = await blocking("io", f"model:{model_name}", sees_images, settings, model_name,
                                 what="looking up the model")
    if sees:
        return "sees"
    return "tool" if settings.vision_model else "blind"


@dataclass(frozen=True)
class ImageIntake:
    text: str  # the message's text (with a note when the images could not be seen)
    images: tuple[ImageRef, ...] = ()
    reply: str | None = None  # set: answer this without calling the model; nothing stored


async def take_for_turn(
    message: InboundMessage, user_id: str, text: str, *, store: Store, settings: Settings,
    senders: Mapping[str, Sender], model_name: str,
) -> ImageIntake:
    """The images of ``message`` for a turn of ``model_name``. A model that cannot see, with no
    vision model to ask: an image alone is answered plainly without a model call, an image with
    text becomes a note; nothing is stored either way."""
    if not has_images(message):
        return ImageIntake(text=text)
    if await sight_of(settings, model_name) == "blind":
        if not text.strip():
            return ImageIntake(text=text, reply=BLIND_REPLY.format(model=model_name))
        return ImageIntake(text=f"{text}\n\n{BLIND_NOTE}")
    taken = await take_images(message, user_id, objects=store.objects, senders=senders,
                              settings=settings)
    if taken.refusal is not None:
        return ImageIntake(text=text, reply=taken.refusal)
    return ImageIntake(text=text, images=taken.images)


def _note(image: ImageRef, sight: Sight, shown_limit: bool, vision_tool: bool) -> str:
    if sight == "sees" and shown_limit:
        tail = "; vision_analyze can look at it" if vision_tool else ""
        return f"[an earlier image, {image.id}, not shown again to keep the prompt small{tail}]"
    if sight == "blind":
        return f"[an image, {image.id}, which this model cannot see]"
    return (f"[the user sent an image, image_id {image.id}: you cannot see images; call "
            "vision_analyze with this image_id and a question to learn what it shows]")


async def show_images(
    convo: Sequence[Message], store: Store, user_id: str, settings: Settings, sight: Sight,
) -> list[Message]:
    """``convo`` with its newest images as ``data:`` URLs and the rest as notes."""
    if not any(m.images for m in convo):
        return list(convo)
    budget = settings.images_in_prompt if sight == "sees" else 0
    vision_tool = bool(settings.vision_model)
    out: list[Message] = []
    for message in reversed(convo):
        if not message.images:
            out.append(message)
            continue
        shown: list[ImageRef] = []
        notes: list[str] = []
        for image in message.images:
            if budget <= 0:
                notes.append(_note(image, sight, True, vision_tool))
                continue
            try:
                mime, data = await blocking("io", user_id, load_image, store.objects, user_id,
                                            image.id, what="reading the image")
            except ImageNotFound:
                notes.append(f"[image {image.id} is no longer stored]")
                continue
            budget -= 1
            shown.append(dataclasses.replace(image, url=data_url(mime, data)))
        content = "\n".join([message.content, *notes]) if message.content else "\n".join(notes)
        out.append(dataclasses.replace(message, content=content, images=tuple(shown)))
    out.reverse()
    return out
