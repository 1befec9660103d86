"""Cheap looks at SQL text before anything parses it: comments, and the statement's first words."""

from __future__ import annotations

import re

import sqlparse

_COMMENT = r"/\*.*?\*/|--[^\n]*"
_COMMENTS = re.compile(_COMMENT, re.DOTALL)
_LEADING_COMMENTS = re.compile(rf"^(?:\s+|{_COMMENT}\n?)*", re.DOTALL)


def spark_string(text: str) -> str:
    """`text` as a Spark SQL string literal (Spark unescapes backslashes)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def is_blank(statement: str) -> bool:
    """Nothing but comments and white space (macros that write through the engine leave these)."""
    return not _COMMENTS.sub("", statement).strip()


def without_leading_comments(statement: str) -> str:
    """The statement from its first keyword on."""
    return _LEADING_COMMENTS.sub("", statement, count=1)


def statements(script: str) -> list[str]:
    """The script's statements in order, without closing semicolons or blank pieces.

    dbt hands a connection scripts of several statements: a model's `sql_header` before the query
    of a contract check or a data test, and hooks. Spark runs one statement per call (and reads
    `SET a = b; SELECT ...` as one setting whose value runs to the end), so each is run alone.
    sqlparse splits only at semicolons outside strings, identifiers and comments; a script without
    a semicolon is one statement and is not parsed at all."""
    script = script.strip().rstrip(";")
    pieces = sqlparse.split(script) if ";" in script else [script]
    return [piece.strip().rstrip(";") for piece in pieces if not is_blank(piece.rstrip(";"))]
