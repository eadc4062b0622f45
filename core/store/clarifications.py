"""Questions asked with the ``clarify`` tool (rows; the rules are in ``core.asking.clarify``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from core.store.db import Database, Row, Statement


@dataclass(frozen=True)
class Question:
    user_id: str
    id: str
    session_id: str
    chat_key: str
    account: str  # who was asked: only they may answer
    question: str
    choices: tuple[str, ...]
    created_at: float
    closed_by: int | None  # the inbox entry that answered or superseded it

    @classmethod
    def from_row(cls, row: Row) -> Question:
        return cls(
            user_id=row["user_id"], id=row["id"], session_id=row["session_id"],
            chat_key=row["chat_key"], account=row["account"], question=row["question"],
            choices=tuple(json.loads(row["choices"])), created_at=row["created_at"],
            closed_by=row["closed_by"],
        )


def latest_question(user_id: str, chat_key: str) -> Statement:
    return ("SELECT * FROM clarifications WHERE user_id = ? AND chat_key = ?"
            " ORDER BY created_at DESC, rowid DESC LIMIT 1", (user_id, chat_key))


class Clarifications:
    def __init__(self, db: Database):
        self.db = db

    def add(self, user_id: str, question_id: str, *, session_id: str, chat_key: str,
            account: str, question: str, choices: Sequence[str]) -> None:
        self.db.execute(
            "INSERT INTO clarifications (user_id, id, session_id, chat_key, account, question,"
            " choices, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (user_id, question_id, session_id, chat_key, account, question,
             json.dumps(list(choices)), self.db.clock.now()),
        )

    def latest(self, user_id: str, chat_key: str) -> Question | None:
        """The chat's most recent question, answered or not."""
        row = self.db.one(*latest_question(user_id, chat_key))
        return Question.from_row(row) if row else None

    def get(self, user_id: str, question_id: str) -> Question | None:
        row = self.db.one("SELECT * FROM clarifications WHERE user_id = ? AND id = ?",
                          (user_id, question_id))
        return Question.from_row(row) if row else None

    def close(self, user_id: str, question_id: str, inbox_id: int) -> bool:
        """Close the question for inbox entry ``inbox_id``; True when it is that entry's (a
        retried turn of the same entry closes it again), False when another entry has it."""
        self.db.execute(
            "UPDATE clarifications SET closed_by = ? WHERE user_id = ? AND id = ?"
            " AND closed_by IS NULL", (inbox_id, user_id, question_id))
        return cast("bool", self.db.scalar(
            "SELECT closed_by FROM clarifications WHERE user_id = ? AND id = ?",
            (user_id, question_id)) == inbox_id)

    def supersede(self, user_id: str, chat_key: str, inbox_id: int, *, keep: str) -> None:
        """Close the chat's open questions other than ``keep`` for inbox entry ``inbox_id``
        (the turn that asked a newer one)."""
        self.db.execute(
            "UPDATE clarifications SET closed_by = ? WHERE user_id = ? AND chat_key = ?"
            " AND closed_by IS NULL AND id != ?", (inbox_id, user_id, chat_key, keep))

    def closed_by(self, user_id: str, chat_key: str, inbox_id: int) -> list[Question]:
        """The chat's questions that inbox entry ``inbox_id`` closed."""
        rows = self.db.query(
            "SELECT * FROM clarifications WHERE user_id = ? AND chat_key = ? AND closed_by = ?"
            " ORDER BY created_at, rowid", (user_id, chat_key, inbox_id))
        return [Question.from_row(row) for row in rows]
