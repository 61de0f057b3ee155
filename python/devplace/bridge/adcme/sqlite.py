"""ADCME's SQLite databases (`julia/DevPlace/src/adcme/sqlite.jl`) over Python's `sqlite3`.

A `Database` keeps one connection, opened on first use and again after `close` (an in-memory
database is gone once closed). Each `execute` is atomic: it runs inside a savepoint, so a
failing statement (or the failing row of many) leaves nothing of itself behind, and with
`commit_after_execute` it is its own transaction, committed before `execute` returns. SQLite's
journal makes a commit all or nothing on disk, so a process killed mid-transaction leaves the
file as it was at the last commit.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from devplace.core.errors import ArgumentValueError, Error, quoted

__all__ = [
    "Database",
    "SQLError",
    "close",
    "columns",
    "commit",
    "drop_table",
    "execute",
    "insert",
    "open_database",
    "table_names",
    "table_rows",
]

# Statements SQLite refuses inside a transaction, or that manage one themselves: run as they are.
_OUTSIDE_TRANSACTION = re.compile(
    r"\s*(BEGIN|COMMIT|END|ROLLBACK|SAVEPOINT|RELEASE|VACUUM)\b", re.IGNORECASE
)
_SAVEPOINT = "devplace_execute"


class SQLError(Error, sqlite3.Error):
    """A statement SQLite refused: names the statement and keeps sqlite3's error as its cause."""


class Database:
    """ADCME's `Database`: a file (or `:memory:`) and whether each `execute` commits."""

    def __init__(self, path: str, commit_after_execute: bool) -> None:
        self.path = path
        self.commit_after_execute = commit_after_execute
        self._connection: sqlite3.Connection | None = None
        self._closed = False

    def connection(self) -> sqlite3.Connection:
        """The open connection, opened now if it is not (refused for a closed in-memory one)."""
        if self._connection is None:
            if self._closed and self.path == ":memory:":
                raise SQLError(
                    "this in-memory database was closed and its tables went with it. "
                    'Hint: Database("file.db") keeps them on disk'
                )
            try:
                # isolation_level=None: devplace begins and ends each transaction itself.
                self._connection = sqlite3.connect(self.path, isolation_level=None)
            except sqlite3.Error as err:
                raise SQLError(
                    f"cannot open the database {quoted(self.path)}: {err}. "
                    "Hint: its folder must exist and be writable"
                ) from err
        return self._connection

    def commit(self) -> None:
        """Commit the open transaction, if any; a failure (a full disk) names the file."""
        if self._connection is None:
            return
        try:
            self._connection.commit()
        except sqlite3.Error as err:
            raise SQLError(
                f"cannot commit to the database {quoted(self.path)}: {err}. "
                "Hint: the last commit is what the file holds"
            ) from err

    def __repr__(self) -> str:
        state = "open" if self._connection is not None else "closed"
        return f"Database({self.path!r}, {state})"


def open_database(path: str | None, commit_after_execute: bool) -> Database:
    """`Database(path)`: `None` for an in-memory one."""
    return Database(":memory:" if path is None else str(path), bool(commit_after_execute))


def _row(values: Any) -> tuple[Any, ...]:
    """One row of parameters as sqlite3 binds them (numpy scalars as Python numbers)."""
    if isinstance(values, np.ndarray):
        return tuple(values.tolist())
    if not isinstance(values, (tuple, list)):
        values = (values,)
    return tuple(v.item() if isinstance(v, np.generic) else v for v in values)


def _rows(params: Sequence[Any]) -> Iterator[tuple[Any, ...]]:
    """`execute`'s parameters, row by row: one iterable of rows, or columns to zip."""
    if len(params) == 1:
        return (_row(r) for r in params[0])
    cols = [c.tolist() if isinstance(c, np.ndarray) else list(c) for c in params]
    if len({len(c) for c in cols}) > 1:
        raise ArgumentValueError(
            "execute",
            "the parameter columns' lengths",
            [len(c) for c in cols],
            "all equal",
            "one value per row in each column",
        )
    return (_row(r) for r in zip(*cols, strict=True))


def execute(
    db: Database, sql: str, params: Sequence[Any] = (), one_row: Any = None
) -> tuple[list[tuple[Any, ...]], list[str], int]:
    """Run `sql` once (with `one_row`'s parameters, if given) or once per row of `params`; the
    rows it selects, its column names and the count of rows it changed (-1 when unknown)."""
    conn = db.connection()
    cursor = conn.cursor()
    if _OUTSIDE_TRANSACTION.match(sql):
        _run(cursor, sql, params, one_row)
        return cursor.fetchall(), _names(cursor), cursor.rowcount
    began = not conn.in_transaction
    if began:
        conn.execute("BEGIN")
    conn.execute(f"SAVEPOINT {_SAVEPOINT}")
    try:
        _run(cursor, sql, params, one_row)
        rows = cursor.fetchall()
    except BaseException:
        # Undo this statement alone: earlier ones of an open transaction stay pending.
        if began:
            conn.rollback()
        elif conn.in_transaction:
            conn.execute(f"ROLLBACK TO {_SAVEPOINT}")
            conn.execute(f"RELEASE {_SAVEPOINT}")
        raise
    conn.execute(f"RELEASE {_SAVEPOINT}")
    if db.commit_after_execute:
        db.commit()
    return rows, _names(cursor), cursor.rowcount


def _names(cursor: sqlite3.Cursor) -> list[str]:
    return [d[0] for d in cursor.description or ()]


def _run(cursor: sqlite3.Cursor, sql: str, params: Sequence[Any], one_row: Any) -> None:
    try:
        if one_row is not None:
            cursor.execute(sql, _row(one_row))
        elif params:
            cursor.executemany(sql, _rows(params))
        else:
            cursor.execute(sql)
    except sqlite3.Error as err:
        raise SQLError(
            f"{type(err).__name__}: {err}\n  in the statement: {quoted(sql.strip())}"
        ) from err


def commit(db: Database) -> None:
    """Commit what `execute` left pending (with `commit_after_execute=false`)."""
    db.commit()


def close(db: Database, keep: bool = True) -> None:
    """Commit (or, with `keep=False`, roll back) what is pending and close the connection."""
    conn = db._connection
    if conn is None:
        return
    try:
        db.commit() if keep else conn.rollback()
    finally:
        conn.close()
        db._connection = None
        db._closed = True


def _quoted_name(table: str) -> str:
    return '"' + str(table).replace('"', '""') + '"'


def table_names(db: Database) -> list[str]:
    """ADCME's `keys(db)`: the names in `sqlite_master` (tables, indexes, views, triggers)."""
    rows, _, _ = execute(db, "SELECT name FROM sqlite_master")
    return [r[0] for r in rows]


def columns(db: Database, table: str) -> list[str]:
    """ADCME's `keys(db, table)`: the column names of `table` (an error if there is none)."""
    return execute(db, f"SELECT * FROM {_quoted_name(table)} LIMIT 0")[1]


def table_rows(db: Database, table: str) -> list[tuple[Any, ...]]:
    """ADCME's `db[table]`: every row of `table`."""
    return execute(db, f"SELECT * FROM {_quoted_name(table)}")[0]


def drop_table(db: Database, table: str) -> None:
    """ADCME's `delete!(db, table)`: drop `table`."""
    execute(db, f"DROP TABLE {_quoted_name(table)}")


def insert(db: Database, table: str, records: Iterable[dict[str, Any]]) -> None:
    """ADCME's `push!(db, table, nts...)`: each record (column => value) inserted or replaced."""
    for record in records:
        names = ", ".join(_quoted_name(c) for c in record)
        marks = ", ".join("?" for _ in record)
        sql = f"INSERT OR REPLACE INTO {_quoted_name(table)} ({names}) VALUES ({marks})"
        execute(db, sql, one_row=tuple(record.values()))
