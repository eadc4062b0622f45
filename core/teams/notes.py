"""The rules of team notes: a note is scanned like every memory entry and refused when flagged;
an admin's note from a clean turn goes live at once, anyone else's (or one written after the
turn read untrusted content) is held for an admin; the live block is bounded, and what no longer
fits is archived (searchable, restorable), never deleted."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.errors import IrisUsageError
from core.store.teams import RANK

if TYPE_CHECKING:
    from core.store import Store
    from core.store.team_notes import TeamNote

NOTES_LIMIT = 2_000  # characters in a team's live block, all notes together
NOTE_LIMIT = 500  # characters in one note


class NoteRefused(IrisUsageError):
    """The note cannot be stored (empty, too long, or flagged by the scanner)."""


@dataclass(frozen=True)
class NoteWritten:
    note: TeamNote
    held_because: str | None  # None: live now


def check_note(content: str) -> str:
    from core.memory.ops import default_scan
    from core.security import describe

    text = content.strip()
    if not text:
        raise NoteRefused("the note is empty")
    if len(text) > NOTE_LIMIT:  # before the scan: nothing unbounded is scanned
        raise NoteRefused(
            f"the note is {len(text):,} characters; a team note holds at most {NOTE_LIMIT:,}"
        )
    findings = default_scan(text)
    if findings:
        raise NoteRefused(f"the note was refused by the safety scanner: {describe(findings)}")
    return text


def overflow(live: list[TeamNote], incoming: int, limit: int = NOTES_LIMIT) -> list[str]:
    """The oldest live notes to archive so ``incoming`` more characters fit."""
    total = sum(len(n.content) for n in live) + incoming
    out: list[str] = []
    for note in live:
        if total <= limit:
            break
        out.append(note.id)
        total -= len(note.content)
    return out


def write_note(
    store: Store, actor: str, team_id: str, content: str, *, tainted_by: str | None = None
) -> NoteWritten:
    """``actor``'s note to the team: live, or held with the reason. Non-members raise
    ``NotAMember`` from the store; flagged text raises ``NoteRefused``; nothing changes then."""
    text = check_note(content)
    role = store.teams.require(team_id, actor)
    if RANK[role] < RANK["admin"]:
        reason = "the writer is not a team admin"
    elif tainted_by:
        reason = f"the turn read untrusted content ({tainted_by})"
    else:
        live = store.team_notes.live(actor, team_id)
        note = store.team_notes.publish(actor, team_id, text, overflow(live, len(text)))
        return NoteWritten(note, None)
    return NoteWritten(store.team_notes.propose(actor, team_id, text, reason), reason)


def approve_note(store: Store, actor: str, team_id: str, note_id: str) -> None:
    """An admin makes a held note live; the oldest live notes archived to make room."""
    note = store.team_notes.get(actor, team_id, note_id)
    check_note(note.content)  # the scanner may have learned since it was held
    live = store.team_notes.live(actor, team_id)
    store.team_notes.decide(actor, team_id, note_id, True, overflow(live, len(note.content)))


def pick_team(store: Store, user_id: str, name: str | None) -> str:
    """The id of the team ``name`` (or of the user's only team when no name is given)."""
    if name:
        return store.teams.find(user_id, name.strip()).id
    mine = store.teams.of_user(user_id)
    if len(mine) == 1:
        return mine[0][0].id
    if not mine:
        raise IrisUsageError("you are not in any team")
    names = ", ".join(team.name for team, _ in mine)
    raise IrisUsageError(f"you are in several teams ({names}): say which")


def written(result: NoteWritten, team_name: str) -> str:
    if result.held_because is None:
        return f"Team note saved to {team_name}; members see it from their next session."
    return (
        f"Team note {result.note.id} held for a {team_name} admin's approval "
        f"({result.held_because})."
    )
