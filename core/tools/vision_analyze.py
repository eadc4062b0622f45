"""``vision_analyze``: ask the configured vision model (``IRIS_VISION_MODEL``) about one of the
user's stored images, for a main model that cannot see. Offered only with a vision model; the
image is looked up in the calling user's own images, so another user's id is simply unknown.
The call's tokens and cost are recorded as the user's usage (``store.usage``), like the turn's."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from core.contracts.toolkit import Tool, ToolContext
from core.errors import ProviderError, ToolRetry
from core.intake.images import ImageNotFound, data_url, load_image
from core.lanes import blocking
from core.messages import ImageRef, Message

if TYPE_CHECKING:
    from core.config import Settings

INSTRUCTIONS = ("Answer the question about the attached image precisely and briefly. Describe "
                "only what is visible; transcribe any text in it exactly.")


class VisionAnalyzeArgs(BaseModel):
    image_id: str = Field(min_length=1, max_length=80, description="e.g. img_…")
    question: str = Field(default="Describe this image.", min_length=1, max_length=2_000)


class VisionAnalyze(Tool):
    name = "vision_analyze"
    description = "Ask a vision model about an image the user sent, by its image_id."
    Args = VisionAnalyzeArgs
    deferred = True
    brief = "look at an image the user sent (by image_id)"
    untrusted_output = True  # what an image says (a screenshot's text) is outside content

    def offered(self, settings: Settings) -> bool:
        return bool(settings.vision_model)

    async def run(self, ctx: ToolContext, args: VisionAnalyzeArgs) -> str:
        model_name = ctx.settings.vision_model
        if not model_name:
            return "No vision model is configured (IRIS_VISION_MODEL)."
        try:
            mime, data = await blocking("io", ctx.user_id, load_image, ctx.store.objects,
                                        ctx.user_id, args.image_id, what="reading the image")
        except ImageNotFound as exc:
            raise ToolRetry(f"{exc}; use an image_id from this conversation") from None
        image = ImageRef(id=args.image_id, mime_type=mime, url=data_url(mime, data))
        model = ctx.services.router.main(model_name)
        try:
            response = await model.complete([
                Message(role="system", content=INSTRUCTIONS),
                Message(role="user", content=args.question, images=(image,)),
            ])
        except ProviderError as exc:
            return f"The vision model could not answer: {exc.user_message()}"
        # Counted like the turn's own calls: per user, session and message, under this model.
        ctx.store.usage.record(ctx.user_id, replace(response.usage, kind="vision"),
                               session_id=ctx.session_id, inbox_id=ctx.inbox_id)
        answer = response.message.content.strip() or "(the vision model gave no answer)"
        return f"{args.image_id}: {answer}"
