"""Documents sent to Iris (PDF, text, Markdown, CSV, JSON) on any platform: saved into the
user's workspace under ``inbox/`` and shown to the model as a note with where the file is and
its text up to a cap, wrapped as untrusted (a document is outside content). A PDF's text is
saved beside it (``name.pdf.txt``) so ``read_file`` can read the rest."""

from __future__ import annotations

import base64
import binascii
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from core.parsers.runner import ParseLimits, ParserCrashed, ParseRefused, parse

if TYPE_CHECKING:
    from core.contracts.senders import Sender
    from core.contracts.services import WorkspaceService
    from core.messages import Attachment, InboundMessage

log = logging.getLogger("iris.documents")

MAX_DOCUMENT_BYTES = 20 * 1024 * 1024  # the Bot API's download limit
TEXT_CHARS = 8_000  # shown in the prompt; the rest is read with read_file
MAX_PAGES = 500
INBOX = "inbox"
TEXT_SUFFIXES = {".txt": "text", ".text": "text", ".md": "Markdown", ".markdown": "Markdown",
                 ".csv": "CSV", ".json": "JSON", ".log": "text"}
TEXT_TYPES = {"text/plain": "text", "text/markdown": "Markdown", "text/x-markdown": "Markdown",
              "text/csv": "CSV", "application/json": "JSON", "application/csv": "CSV"}
_UNSAFE = re.compile(r"[^A-Za-z0-9._ -]+")
_DATA_URL = re.compile(r"^data:([\w.+/-]*)(;[\w=.+-]+)*;base64,", re.IGNORECASE)


class DocumentRefused(ValueError):
    """A document that cannot be taken (bad data, too big): the message says why."""


@dataclass(frozen=True)
class Taken:
    text: str  # the message's text with a note per document
    saved: tuple[str, ...] = ()  # workspace paths written


def has_documents(message: InboundMessage) -> bool:
    return any(a.kind == "file" for a in message.attachments)


def decode_data_url(url: str, max_bytes: int = MAX_DOCUMENT_BYTES, *,
                    what: str = "file_data") -> tuple[str, bytes]:
    """``data:<type>;base64,<data>`` → (media type, bytes)."""
    match = _DATA_URL.match(url)
    if not match:
        raise DocumentRefused(f"{what} must be a base64 data: URL")
    payload = url[match.end():]
    if len(payload) > (max_bytes * 4) // 3 + 4:
        raise DocumentRefused(f"it is over {max_bytes / (1024 * 1024):g} MB")
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise DocumentRefused(f"{what} is not valid base64") from None
    return (match[1] or "application/octet-stream").lower(), data


def safe_name(name: str | None, fallback: str) -> str:
    base = PurePosixPath((name or "").replace("\\", "/")).name
    base = _UNSAFE.sub("_", base).strip(" .")[:120]
    return base or fallback


def kind_of(name: str, mime: str | None, data: bytes) -> str | None:
    """"PDF", "text", "Markdown", "CSV", "JSON", or None for what Iris does not read."""
    if data.lstrip()[:5] == b"%PDF-":
        return "PDF"
    suffix = PurePosixPath(name).suffix.lower()
    kind = TEXT_SUFFIXES.get(suffix) or TEXT_TYPES.get((mime or "").split(";")[0].lower())
    if kind is None or b"\x00" in data[:4096]:
        return None
    return kind


async def pdf_text(data: bytes, user_id: str, limits: ParseLimits) -> tuple[str, int, str]:
    """The PDF's text page by page, its page count, and a note if its reading was cut."""
    try:
        parsed = await parse("pdf", data, user_id=user_id, limits=limits, max_pages=MAX_PAGES)
    except ParseRefused as exc:
        raise DocumentRefused(str(exc)) from None
    except ParserCrashed as exc:
        raise DocumentRefused(f"it could not be read: {exc}") from None
    return parsed.text, parsed.pages or 0, parsed.cut_note()


async def _fetch(attachment: Attachment, senders: Mapping[str, Sender], platform: str) -> bytes:
    if attachment.ref.startswith("data:"):
        return decode_data_url(attachment.ref)[1]
    download = getattr(senders.get(platform), "download", None)
    if download is None:
        raise DocumentRefused(f"I cannot fetch files from {platform}")
    data: bytes = await download(attachment.ref)
    return data


async def _free_path(box: object, name: str) -> str:
    try:
        taken = {e.name for e in await box.list_dir(INBOX)}  # type: ignore[attr-defined]
    except Exception:
        taken = set()
    stem, suffix = PurePosixPath(name).stem, PurePosixPath(name).suffix
    candidate, n = name, 1
    while candidate in taken or (suffix == ".pdf" and f"{candidate}.txt" in taken):
        n += 1
        candidate = f"{stem}-{n}{suffix}"
    return f"{INBOX}/{candidate}"


async def take_documents(
    message: InboundMessage, user_id: str, text: str, *, senders: Mapping[str, Sender],
    workspaces: WorkspaceService, limits: ParseLimits, text_chars: int = TEXT_CHARS,
) -> Taken:
    """Save the message's documents into ``user_id``'s workspace; ``text`` gains a note each."""
    from core.security.untrusted import wrap_untrusted

    notes: list[str] = []
    saved: list[str] = []
    files = [a for a in message.attachments if a.kind == "file"]
    for index, attachment in enumerate(files, start=1):
        name = safe_name(attachment.name, f"document-{index}")
        try:
            data = await _fetch(attachment, senders, message.platform)
            if len(data) > MAX_DOCUMENT_BYTES:
                raise DocumentRefused("it is over 20 MB")
            kind = kind_of(name, attachment.mime_type, data)
            if kind is None:
                raise DocumentRefused("only PDF, text, Markdown, CSV and JSON files are read")
            cut = ""
            if kind == "PDF":
                body, pages, cut = await pdf_text(data, user_id, limits)
                detail = f"PDF, {pages} page{'s' if pages != 1 else ''}"
            else:
                body, detail = data.decode("utf-8", errors="replace"), kind
            async with workspaces.use(user_id) as box:
                path = await _free_path(box, name)
                await box.write_file(path, data)
                full = path
                if kind == "PDF":
                    full = f"{path}.txt"
                    kept = "\n\n".join(part for part in (body, cut) if part)
                    await box.write_file(full, kept.encode("utf-8"))
            saved.append(path)
        except DocumentRefused as exc:
            notes.append(f"[the user sent {name!r}, which was not saved: {exc}]")
            continue
        except Exception as exc:
            log.warning("document %s could not be taken: %s", name, exc)
            notes.append(f"[the user sent {name!r}, which could not be saved: "
                         f"{type(exc).__name__}]")
            continue
        size = f"{len(data) / 1024:.1f} KB"
        shown = body[:text_chars]
        rest = len(body) - len(shown)
        more = (f"; the text shown below stops after {len(shown)} of {len(body)} characters: "
                f"read_file {full!r} for the rest") if rest > 0 else ""
        extra = f" (its text in {full})" if full != path else ""
        note = (f"[the user sent a document, saved as {path}{extra}: {detail}, {size}"
                f"{more}]\n{wrap_untrusted('document', shown)}")
        notes.append(f"{note}\n{cut}" if cut else note)
    joined = "\n\n".join(notes)
    return Taken(text=f"{text}\n\n{joined}" if text.strip() else joined, saved=tuple(saved))
