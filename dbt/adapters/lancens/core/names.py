"""How dbt names map to namespace identifiers.

A dbt schema is a namespace path written with dots: `analytics.marts` is the namespace
`["analytics", "marts"]`. A model is a table in that namespace. In Spark SQL the namespace is a
database whose name joins the levels with `__` (see `dbt.adapters.lancens.spark.catalog`).

Case: names are case-insensitive, as Spark SQL resolves them. A dbt name maps to its lower-cased
identifier (`DailyTotals.sql` is the table `dailytotals`, `+schema: Marts` the level `marts`), and
that is the id every Lance tool sees in `__manifest`. Two dbt names that differ only in case are
one table, as they are one table for Spark.
"""

from __future__ import annotations

import re

from dbt_common.exceptions import DbtRuntimeError

# A level may contain `__` (dbt's `dbt_test__audit`); Spark's database name escapes it.
_LEVEL = re.compile(r"^[a-z0-9](?:[a-z0-9_]*[a-z0-9])?$")
_TABLE = re.compile(r"^[a-z0-9_]+$")


def validate_level(level: str, what: str) -> str:
    """A namespace level, lower-cased: letters, digits and underscores, not at either end (a level
    boundary in a Spark database name is `__`, so an end underscore would make it ambiguous)."""
    normalized = level.lower()
    if not _LEVEL.match(normalized):
        raise DbtRuntimeError(
            f"Invalid {what} {level!r}: dbt-lancens schema levels use letters, digits and "
            "underscores, and do not start or end with an underscore, because each level is part "
            "of a Spark database name"
        )
    return normalized


def validate_table_name(name: str) -> str:
    """A table name, lower-cased: one Spark identifier that Spark SQL can name unquoted."""
    normalized = name.lower()
    if not _TABLE.match(normalized):
        raise DbtRuntimeError(
            f"Invalid table name {name!r}: dbt-lancens table names use letters, digits and "
            "underscores, so Spark SQL can name them unquoted"
        )
    return normalized


def schema_to_namespace(schema: str) -> list[str]:
    """`analytics.marts` -> `["analytics", "marts"]`, validating every level."""
    if not schema:
        raise DbtRuntimeError("Invalid schema name: it is empty")
    return [validate_level(level, "schema level") for level in schema.split(".")]


def namespace_to_schema(namespace_id: list[str]) -> str:
    return ".".join(namespace_id)


def table_id(schema: str, identifier: str) -> list[str]:
    return [*schema_to_namespace(schema), validate_table_name(identifier)]
