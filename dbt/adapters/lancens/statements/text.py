"""Cheap looks at SQL text before anything parses it: comments, and the statement's first words."""

from __future__ import annotations

import re

_COMMENT = r"/\*.*?\*/|--[^\n]*"
_COMMENTS = re.compile(_COMMENT, re.DOTALL)
_LEADING_COMMENTS = re.compile(rf"^(?:\s+|{_COMMENT}\n?)*", re.DOTALL)


def is_blank(statement: str) -> bool:
    """Nothing but comments and white space (macros that write through the engine leave these)."""
    return not _COMMENTS.sub("", statement).strip()


def without_leading_comments(statement: str) -> str:
    """The statement from its first keyword on."""
    return _LEADING_COMMENTS.sub("", statement, count=1)
