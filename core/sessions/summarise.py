"""The side-model calls of sessions: structured summaries of compacted conversation and short
session titles."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from core.messages import Message, Usage

if TYPE_CHECKING:
    from core.store.compaction import Summary
    from core.store.sessions import StoredMessage

CHUNK_CHARS = 48_000
MESSAGE_CHARS = 4_000
SECTIONS = ("Goal", "Constraints", "Decisions", "Done", "Open items", "Key facts")

SUMMARY_INSTRUCTIONS = f"""\
You maintain the running summary of a long conversation between a user and their AI agent, \
Iris. The summary replaces the older messages in Iris' prompt, so it must keep everything Iris \
needs to continue the work without asking again: names, numbers, paths, commands, decisions and \
their reasons, and what the user prefers. Write Markdown with exactly these sections, in this \
order (write "none" under a section with nothing to say): \
{", ".join(f"## {s}" for s in SECTIONS)}. Under "Key facts" list concrete facts (values, \
identifiers, file names, dates). Be specific and compact; no preamble, no closing remarks."""

TITLE_INSTRUCTIONS = """\
Write a short title (at most 6 words) for the conversation below, naming its topic. Answer with \
the title only: no quotes, no punctuation at the end."""


def transcript(messages: Sequence[StoredMessage]) -> list[str]:
    lines = []
    for stored in messages:
        m = stored.message
        text = m.content if len(m.content) <= MESSAGE_CHARS else (
            m.content[: MESSAGE_CHARS - 200] + " … " + m.content[-150:]
        )
        if m.role == "tool":
            lines.append(f"[tool result {m.name or ''}] {text}")
        else:
            lines.append(f"[{m.role}] {text}")
        for call in m.tool_calls:
            lines.append(f"[{m.role} calls {call.name}] {call.arguments[:MESSAGE_CHARS]}")
    return lines


def _chunks(lines: list[str]) -> list[str]:
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for line in lines:
        if current and size + len(line) > CHUNK_CHARS:
            chunks.append("\n".join(current))
            current, size = [], 0
        current.append(line)
        size += len(line) + 1
    if current:
        chunks.append("\n".join(current))
    return chunks


async def summarise(
    model: Any, *, previous: Summary | None, messages: Sequence[StoredMessage],
    usage: list[Usage] | None = None,
) -> str:
    """A structured summary of ``previous`` plus ``messages``; large inputs are folded in
    chunk by chunk. Raises on a failed or empty answer (the caller keeps the prompt as it was)."""
    text = previous.content if previous is not None else ""
    for chunk in _chunks(transcript(messages)):
        earlier = f"Summary so far:\n{text}\n\n" if text else ""
        request = [
            Message(role="system", content=SUMMARY_INSTRUCTIONS),
            Message(role="user", content=f"{earlier}Conversation to fold in:\n{chunk}\n\n"
                                         "Write the updated summary."),
        ]
        response = await model.complete(request)
        if usage is not None:
            usage.append(response.usage)
        answer = (response.message.content or "").strip()
        if not answer:
            raise ValueError("the side model returned an empty summary")
        text = answer
    if not text:
        raise ValueError("nothing to summarise")
    return text


async def make_title(model: Any, messages: Sequence[Message]) -> tuple[str | None, Usage | None]:
    """A short title from the first exchange (None when the model gives nothing usable), and
    the usage of the call."""
    lines = [f"[{m.role}] {m.content[:1500]}" for m in messages if m.content and m.role in
             ("user", "assistant")][:4]
    if not lines:
        return None, None
    response = await model.complete([
        Message(role="system", content=TITLE_INSTRUCTIONS),
        Message(role="user", content="\n".join(lines)),
    ])
    title = " ".join((response.message.content or "").split()).strip(" \"'`*#.")
    return (title[:80].rstrip() or None), response.usage
