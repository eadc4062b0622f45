"""Files people send on WhatsApp, Slack and email, read the same way: each parser turns a file
into an ``Attachment`` (``kind="image"`` for pictures, ``"file"`` for the rest) and the
platform's sender downloads it by its ``ref`` (``download(ref) -> bytes``), within the cap the
documents path keeps (20 MB), streamed, so an oversized body is never held whole in memory.
The documents path (``core.intake.documents``) saves files; images go to the image path."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from core.intake.documents import MAX_DOCUMENT_BYTES, DocumentRefused

if TYPE_CHECKING:
    import httpx

MAX_MEDIA_BYTES = MAX_DOCUMENT_BYTES
MAX_ATTACHMENTS = 10  # files read from one message; the rest are named to the model, not read
MB = 1024 * 1024


def too_big(size: int, limit: int = MAX_MEDIA_BYTES) -> DocumentRefused:
    return DocumentRefused(f"it is {size / MB:.1f} MB, over the {limit // MB} MB limit")


def kind_for(mime_type: str | None) -> Literal["image", "file"]:
    """``image`` for pictures a model can look at, ``file`` for everything else."""
    mime = (mime_type or "").split(";", 1)[0].strip().lower()
    return "image" if mime.startswith("image/") and mime != "image/svg+xml" else "file"


async def fetch_capped(
    http: httpx.AsyncClient, url: str, *, headers: dict[str, str] | None = None,
    limit: int = MAX_MEDIA_BYTES, what: str = "the file",
) -> tuple[bytes, str]:
    """GET ``url`` and return (body, content type); refused past ``limit`` bytes, whether
    declared (Content-Length) or streamed, without reading the rest."""
    async with http.stream("GET", url, headers=headers) as response:
        if response.status_code != 200:
            raise DocumentRefused(f"{what} could not be downloaded (HTTP "
                                  f"{response.status_code})")
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise too_big(int(declared), limit)
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > limit:
                raise too_big(size, limit)
            chunks.append(chunk)
        return b"".join(chunks), response.headers.get("content-type", "")


def over_limit_note(names: list[str], limit: int = MAX_ATTACHMENTS) -> str:
    """The note for files past the per-message count (named, not read)."""
    shown = ", ".join(repr(n) for n in names[:20])
    more = f" and {len(names) - 20} more" if len(names) > 20 else ""
    return (f"[the user sent {len(names)} more file{'s' if len(names) != 1 else ''} "
            f"({shown}{more}), which {'were' if len(names) != 1 else 'was'} not read: at most "
            f"{limit} files are read from one message]")
