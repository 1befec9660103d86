"""How dbt names map to namespace identifiers.

A dbt schema is a namespace path written with dots: `analytics.marts` is the namespace
`["analytics", "marts"]`. A model is a table in that namespace. In Spark SQL the namespace is a
database whose name joins the levels with `__` (see `dbt.adapters.lancens.spark.catalog`).
"""

from __future__ import annotations

import re

from dbt_common.exceptions import DbtRuntimeError

_LEVEL = re.compile(r"^[a-z0-9](?:[a-z0-9_]*[a-z0-9])?$")
_TABLE = re.compile(r"^[a-z0-9_]+$")


def validate_level(level: str, what: str) -> str:
    """A namespace level: `__` would be ambiguous once levels are joined into one Spark database name."""
    if not _LEVEL.match(level) or "__" in level:
        raise DbtRuntimeError(
            f"Invalid {what} {level!r}: dbt-lancens schema levels use lower-case letters, digits and "
            "single underscores (no leading, trailing or double underscore), because namespace "
            "levels are joined with '__' in Spark database names"
        )
    return level


def validate_table_name(name: str) -> str:
    """A table name: one Spark identifier (lower case, as Spark resolves names case-insensitively)."""
    if not _TABLE.match(name):
        raise DbtRuntimeError(
            f"Invalid table name {name!r}: dbt-lancens table names use lower-case letters, digits "
            "and underscores, so Spark SQL can name them unquoted"
        )
    return name


def schema_to_namespace(schema: str) -> list[str]:
    """`analytics.marts` -> `["analytics", "marts"]`, validating every level."""
    if not schema:
        raise DbtRuntimeError("Invalid schema name: it is empty")
    return [validate_level(level, "schema level") for level in schema.split(".")]


def namespace_to_schema(namespace_id: list[str]) -> str:
    return ".".join(namespace_id)


def table_id(schema: str, identifier: str) -> list[str]:
    return [*schema_to_namespace(schema), validate_table_name(identifier)]
