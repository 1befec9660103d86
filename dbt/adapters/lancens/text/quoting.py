"""Back-quoted identifiers, as Spark SQL and Lance (DataFusion) SQL both write them: the name in
backticks, a backtick inside doubled."""

from __future__ import annotations

from collections.abc import Sequence


def quote(identifier: str) -> str:
    """An identifier in backticks (a backtick inside is doubled)."""
    return "`" + identifier.replace("`", "``") + "`"


def quote_path(parts: Sequence[str]) -> str:
    """A dotted name (a nested column, `database`.`table`), each part quoted."""
    return ".".join(quote(part) for part in parts)


def unquote(token: str) -> str:
    """The identifier a back-quoted token (`` `a``b` ``) names: ``a`b``."""
    return token[1:-1].replace("``", "`")
