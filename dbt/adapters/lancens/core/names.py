"""How dbt names map to namespace identifiers and Spark database names: the one naming rule.

A dbt schema is a namespace path written with dots: `analytics.marts` is the namespace
`["analytics", "marts"]`. A model is a table in that namespace. In Spark SQL the namespace is a
database whose name joins the levels with `__` (`analytics__marts`); the root namespace is Spark's
`default` database. To keep that mapping reversible a level is lower case (Spark lower-cases
database names), uses letters, digits and single underscores, does not start or end with `_`, and
the first level is not `default`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from dbt_common.exceptions import DbtRuntimeError

SEPARATOR = "__"
ROOT_DATABASE = "default"
_LEVEL = re.compile(r"^[a-z0-9](?:[a-z0-9_]*[a-z0-9])?$")
_TABLE = re.compile(r"^[a-z0-9_]+$")


class InvalidNameError(DbtRuntimeError, ValueError):
    """A schema level, database or table name that dbt-lancens cannot map (the message says why)."""


def validate_level(level: str, what: str = "schema level", position: int = 1) -> str:
    """One namespace level; `position` 0 is the top level, which may not be `default`."""
    if not _LEVEL.match(level) or SEPARATOR in level:
        raise InvalidNameError(
            f"Invalid {what} {level!r}: dbt-lancens schema levels use lower-case letters, digits and "
            "single underscores (no leading, trailing or double underscore), because namespace "
            f"levels are joined with {SEPARATOR!r} in Spark database names"
        )
    if position == 0 and level == ROOT_DATABASE:
        raise InvalidNameError(
            f"Invalid {what} {level!r}: {ROOT_DATABASE!r} is the Spark database of the root namespace"
        )
    return level


def validate_table_name(name: str) -> str:
    """A table name: one Spark identifier (lower case, as Spark resolves names case-insensitively)."""
    if not _TABLE.match(name):
        raise InvalidNameError(
            f"Invalid table name {name!r}: dbt-lancens table names use lower-case letters, digits "
            "and underscores, so Spark SQL can name them unquoted"
        )
    return name


def schema_to_namespace(schema: str) -> list[str]:
    """`analytics.marts` -> `["analytics", "marts"]`, validating every level."""
    if not schema:
        raise InvalidNameError("Invalid schema name: it is empty")
    return [validate_level(level, "schema level", i) for i, level in enumerate(schema.split("."))]


def namespace_to_schema(namespace_id: Sequence[str]) -> str:
    return ".".join(namespace_id)


def table_id(schema: str, identifier: str) -> list[str]:
    return [*schema_to_namespace(schema), validate_table_name(identifier)]


def relation_table_id(relation: object) -> list[str]:
    """The table id of a dbt relation object or of a string `schema.table` (the schema may be dotted)."""
    if isinstance(relation, str):
        schema, dot, name = relation.strip().rpartition(".")
        if not dot:
            raise InvalidNameError(f"a relation string must be `schema.table`, got {relation!r}")
        return table_id(schema, name)
    return table_id(getattr(relation, "schema", None) or "", getattr(relation, "identifier", None) or "")


def database_name(namespace_id: Sequence[str]) -> str:
    """The Spark database of a namespace (levels joined by `__`; the root is `default`)."""
    for position, level in enumerate(namespace_id):
        validate_level(level, "namespace level", position)
    return SEPARATOR.join(namespace_id) if namespace_id else ROOT_DATABASE


def namespace_id(database: str) -> list[str]:
    """The namespace a Spark database mirrors; inverse of `database_name`."""
    if database.lower() == ROOT_DATABASE:
        return []
    levels = database.split(SEPARATOR)
    for position, level in enumerate(levels):
        validate_level(level, "database name level", position)
    return levels


def quote(identifier: str) -> str:
    """A Spark SQL identifier in backticks (a backtick inside is doubled)."""
    return "`" + identifier.replace("`", "``") + "`"


def qualified_name(object_id: Sequence[str]) -> str:
    """`database`.`table` (quoted) of a table or view id."""
    return f"{quote(database_name(object_id[:-1]))}.{quote(object_id[-1])}"
