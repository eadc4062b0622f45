"""The SQLite C API through ctypes, as much of it as a Hrana server needs.

Python's ``sqlite3`` module hides what Hrana's ``describe`` and ``StmtResult`` report
(parameter names, declared column types, whether a statement is read-only or an EXPLAIN), so the
fake server talks to the C library directly: one ``Connection`` per Hrana stream.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any


def _library() -> ctypes.CDLL:
    """A recent SQLite (FTS5 with ``contentless_delete`` needs 3.43; Debian 12 has 3.40):
    the one sqlean-py bundles, whose extension module exports the C API; else the system's."""
    spec = importlib.util.find_spec("sqlean._sqlite3")
    if spec is not None and spec.origin:
        return ctypes.CDLL(spec.origin)
    return ctypes.CDLL(ctypes.util.find_library("sqlite3") or "libsqlite3.so.0")


_lib = _library()

_p = ctypes.c_void_p
_i64 = ctypes.c_int64
_TRANSIENT = ctypes.c_void_p(-1)

_SIGNATURES: dict[str, tuple[Any, list[Any]]] = {
    "sqlite3_open_v2": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(_p), ctypes.c_int, _p]),
    "sqlite3_close_v2": (ctypes.c_int, [_p]),
    "sqlite3_busy_timeout": (ctypes.c_int, [_p, ctypes.c_int]),
    "sqlite3_extended_result_codes": (ctypes.c_int, [_p, ctypes.c_int]),
    "sqlite3_prepare_v2": (ctypes.c_int, [_p, _p, ctypes.c_int, ctypes.POINTER(_p),
                                          ctypes.POINTER(_p)]),
    "sqlite3_finalize": (ctypes.c_int, [_p]),
    "sqlite3_step": (ctypes.c_int, [_p]),
    "sqlite3_errmsg": (ctypes.c_char_p, [_p]),
    "sqlite3_errstr": (ctypes.c_char_p, [ctypes.c_int]),
    "sqlite3_extended_errcode": (ctypes.c_int, [_p]),
    "sqlite3_changes64": (_i64, [_p]),
    "sqlite3_total_changes64": (_i64, [_p]),
    "sqlite3_last_insert_rowid": (_i64, [_p]),
    "sqlite3_get_autocommit": (ctypes.c_int, [_p]),
    "sqlite3_stmt_readonly": (ctypes.c_int, [_p]),
    "sqlite3_stmt_isexplain": (ctypes.c_int, [_p]),
    "sqlite3_bind_parameter_count": (ctypes.c_int, [_p]),
    "sqlite3_bind_parameter_name": (ctypes.c_char_p, [_p, ctypes.c_int]),
    "sqlite3_bind_parameter_index": (ctypes.c_int, [_p, ctypes.c_char_p]),
    "sqlite3_bind_null": (ctypes.c_int, [_p, ctypes.c_int]),
    "sqlite3_bind_int64": (ctypes.c_int, [_p, ctypes.c_int, _i64]),
    "sqlite3_bind_double": (ctypes.c_int, [_p, ctypes.c_int, ctypes.c_double]),
    "sqlite3_bind_text": (ctypes.c_int, [_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int, _p]),
    "sqlite3_bind_blob": (ctypes.c_int, [_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int, _p]),
    "sqlite3_column_count": (ctypes.c_int, [_p]),
    "sqlite3_column_name": (ctypes.c_char_p, [_p, ctypes.c_int]),
    "sqlite3_column_decltype": (ctypes.c_char_p, [_p, ctypes.c_int]),
    "sqlite3_column_type": (ctypes.c_int, [_p, ctypes.c_int]),
    "sqlite3_column_int64": (_i64, [_p, ctypes.c_int]),
    "sqlite3_column_double": (ctypes.c_double, [_p, ctypes.c_int]),
    "sqlite3_column_text": (_p, [_p, ctypes.c_int]),
    "sqlite3_column_blob": (_p, [_p, ctypes.c_int]),
    "sqlite3_column_bytes": (ctypes.c_int, [_p, ctypes.c_int]),
}
for _name, (_res, _args) in _SIGNATURES.items():
    _fn = getattr(_lib, _name)
    _fn.restype, _fn.argtypes = _res, _args

OK, ROW, DONE = 0, 100, 101
INTEGER, FLOAT, TEXT, BLOB, NULL = 1, 2, 3, 4, 5
_OPEN_READWRITE, _OPEN_CREATE, _OPEN_FULLMUTEX = 0x2, 0x4, 0x10000

# Primary result codes by number, and the extended constraint codes callers tell apart.
_CODE_NAMES = {
    1: "SQLITE_ERROR", 2: "SQLITE_INTERNAL", 3: "SQLITE_PERM", 4: "SQLITE_ABORT",
    5: "SQLITE_BUSY", 6: "SQLITE_LOCKED", 7: "SQLITE_NOMEM", 8: "SQLITE_READONLY",
    9: "SQLITE_INTERRUPT", 10: "SQLITE_IOERR", 11: "SQLITE_CORRUPT", 13: "SQLITE_FULL",
    14: "SQLITE_CANTOPEN", 17: "SQLITE_SCHEMA", 18: "SQLITE_TOOBIG", 19: "SQLITE_CONSTRAINT",
    20: "SQLITE_MISMATCH", 21: "SQLITE_MISUSE", 25: "SQLITE_RANGE",
    275: "SQLITE_CONSTRAINT_CHECK", 787: "SQLITE_CONSTRAINT_FOREIGNKEY",
    1299: "SQLITE_CONSTRAINT_NOTNULL", 1555: "SQLITE_CONSTRAINT_PRIMARYKEY",
    2067: "SQLITE_CONSTRAINT_UNIQUE", 517: "SQLITE_BUSY_SNAPSHOT", 261: "SQLITE_BUSY_RECOVERY",
}

Value = None | int | float | str | bytes


class SqliteError(Exception):
    def __init__(self, message: str, code: str):
        super().__init__(message)
        self.message = message
        self.code = code


@dataclass(frozen=True)
class Column:
    name: str | None
    decltype: str | None


@dataclass(frozen=True)
class Description:
    params: list[str | None]
    cols: list[Column]
    is_explain: bool
    is_readonly: bool


@dataclass
class Result:
    cols: list[Column]
    rows: list[list[Value]]
    affected_row_count: int
    last_insert_rowid: int | None


def code_name(code: int) -> str:
    return _CODE_NAMES.get(code) or _CODE_NAMES.get(code & 0xFF, f"SQLITE_UNKNOWN_{code}")


def _text(ptr: bytes | None) -> str | None:
    return None if ptr is None else ptr.decode("utf-8", "replace")


class Connection:
    """One SQLite connection (a Hrana stream's). Not for use by two threads at once."""

    def __init__(self, path: str, *, busy_timeout_ms: int = 5000):
        handle = _p()
        flags = _OPEN_READWRITE | _OPEN_CREATE | _OPEN_FULLMUTEX
        rc = _lib.sqlite3_open_v2(path.encode(), ctypes.byref(handle), flags, None)
        if rc != OK:
            message = _text(_lib.sqlite3_errstr(rc)) or "cannot open"
            _lib.sqlite3_close_v2(handle)
            raise SqliteError(f"cannot open {path}: {message}", code_name(rc))
        self._db: ctypes.c_void_p | None = handle  # None once closed
        _lib.sqlite3_extended_result_codes(handle, 1)
        _lib.sqlite3_busy_timeout(handle, busy_timeout_ms)

    def close(self) -> None:
        if self._db:
            _lib.sqlite3_close_v2(self._db)
            self._db = None

    @property
    def is_autocommit(self) -> bool:
        return bool(_lib.sqlite3_get_autocommit(self._db))

    def _error(self, rc: int) -> SqliteError:
        message = _text(_lib.sqlite3_errmsg(self._db)) or _text(_lib.sqlite3_errstr(rc)) or ""
        return SqliteError(message, code_name(_lib.sqlite3_extended_errcode(self._db) or rc))

    def _prepare(self, base: int, start: int, end: int) -> tuple[_p, int]:
        stmt, tail = _p(), _p()
        rc = _lib.sqlite3_prepare_v2(
            self._db, base + start, end - start, ctypes.byref(stmt), ctypes.byref(tail)
        )
        if rc != OK:
            raise self._error(rc)
        return stmt, (tail.value - base) if tail.value else end

    def statements(self, sql: str) -> Iterator[_Statement]:
        """Prepare the statements of ``sql`` one after the other (each is finalized when the
        caller moves on); empty statements and trailing comments are skipped."""
        data = sql.encode()
        buffer = ctypes.create_string_buffer(data, len(data) + 1)
        base = ctypes.addressof(buffer)
        offset = 0
        while offset < len(data):
            stmt, offset = self._prepare(base, offset, len(data))
            if not stmt.value:
                continue
            try:
                yield _Statement(self, stmt)
            finally:
                _lib.sqlite3_finalize(stmt)

    @contextmanager
    def single(self, sql: str) -> Iterator[_Statement]:
        """Exactly one statement (Hrana's ``Stmt``); anything but comments after it is an
        error, raised before the statement runs."""
        data = sql.encode()
        buffer = ctypes.create_string_buffer(data, len(data) + 1)
        base = ctypes.addressof(buffer)
        stmt, offset = self._prepare(base, 0, len(data))
        try:
            if not stmt.value:
                raise SqliteError("SQL string does not contain any statement", "SQL_NO_STATEMENT")
            if data[offset:].strip(b" \t\r\n;"):
                try:
                    rest, _ = self._prepare(base, offset, len(data))
                    more = bool(rest.value)
                    _lib.sqlite3_finalize(rest)
                except SqliteError:  # it does not even parse alone: still a second statement
                    more = True
                if more:
                    raise SqliteError("SQL string contains more than one statement", "SQL_MANY")
            yield _Statement(self, stmt)
        finally:
            _lib.sqlite3_finalize(stmt)


class _Statement:
    def __init__(self, conn: Connection, handle: _p):
        self._conn = conn
        self._stmt = handle

    def describe(self) -> Description:
        stmt = self._stmt
        params = [
            _text(_lib.sqlite3_bind_parameter_name(stmt, i))
            for i in range(1, _lib.sqlite3_bind_parameter_count(stmt) + 1)
        ]
        return Description(
            params=params, cols=self.columns(),
            is_explain=bool(_lib.sqlite3_stmt_isexplain(stmt)),
            is_readonly=bool(_lib.sqlite3_stmt_readonly(stmt)),
        )

    def columns(self) -> list[Column]:
        stmt = self._stmt
        return [
            Column(_text(_lib.sqlite3_column_name(stmt, i)),
                   _text(_lib.sqlite3_column_decltype(stmt, i)))
            for i in range(_lib.sqlite3_column_count(stmt))
        ]

    @property
    def param_count(self) -> int:
        return _lib.sqlite3_bind_parameter_count(self._stmt)

    def param_index(self, name: str) -> int:
        return _lib.sqlite3_bind_parameter_index(self._stmt, name.encode())

    def bind(self, index: int, value: Value) -> None:
        stmt = self._stmt
        if value is None:
            rc = _lib.sqlite3_bind_null(stmt, index)
        elif isinstance(value, bool | int):
            rc = _lib.sqlite3_bind_int64(stmt, index, int(value))
        elif isinstance(value, float):
            rc = _lib.sqlite3_bind_double(stmt, index, value)
        elif isinstance(value, str):
            data = value.encode()
            rc = _lib.sqlite3_bind_text(stmt, index, data, len(data), _TRANSIENT)
        else:
            data = bytes(value)
            rc = _lib.sqlite3_bind_blob(stmt, index, data, len(data), _TRANSIENT)
        if rc != OK:
            raise self._conn._error(rc)

    def run(self, *, want_rows: bool = True) -> Result:
        stmt, db = self._stmt, self._conn._db
        before = _lib.sqlite3_total_changes64(db)
        rows: list[list[Value]] = []
        while True:
            rc = _lib.sqlite3_step(stmt)
            if rc == DONE:
                break
            if rc != ROW:
                raise self._conn._error(rc)
            if want_rows:
                rows.append([self._value(i) for i in range(_lib.sqlite3_column_count(stmt))])
        changed = _lib.sqlite3_total_changes64(db) != before
        return Result(
            cols=self.columns(), rows=rows,
            affected_row_count=_lib.sqlite3_changes64(db) if changed else 0,
            last_insert_rowid=_lib.sqlite3_last_insert_rowid(db),
        )

    def _value(self, i: int) -> Value:
        stmt = self._stmt
        kind = _lib.sqlite3_column_type(stmt, i)
        if kind == INTEGER:
            return int(_lib.sqlite3_column_int64(stmt, i))
        if kind == FLOAT:
            return float(_lib.sqlite3_column_double(stmt, i))
        if kind == NULL:
            return None
        getter = _lib.sqlite3_column_text if kind == TEXT else _lib.sqlite3_column_blob
        ptr = getter(stmt, i)
        size = _lib.sqlite3_column_bytes(stmt, i)
        raw = ctypes.string_at(ptr, size) if ptr else b""
        return raw.decode("utf-8", "replace") if kind == TEXT else raw
