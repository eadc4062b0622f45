"""What a statement's text says about it, for the remote database's rules (no I/O here)."""

from __future__ import annotations

import re


def read_only(sql: str) -> bool:
    """Whether a statement only reads (so it may be sent again, or run outside a transaction)."""
    head = sql.lstrip().split(None, 1)
    word = head[0].upper() if head else ""
    if word in ("SELECT", "EXPLAIN", "VALUES"):
        return True
    if word == "PRAGMA":
        return "=" not in sql
    if word == "WITH":
        return not re.search(r"\b(INSERT|UPDATE|DELETE|REPLACE)\b", sql, re.IGNORECASE)
    return False
