"""How dbt names map to namespace identifiers and Spark database names: the one naming rule.

A dbt schema is a namespace path written with dots: `analytics.marts` is the namespace
`["analytics", "marts"]`. A model is a table in that namespace. In Spark SQL the namespace is a
database whose name joins the levels with `__` (`analytics__marts`); the root namespace is Spark's
`default` database, so the first level is not `default`. A level uses letters, digits and
underscores and does not start or end with `_`; a run of two or more underscores inside a level
(dbt's `dbt_test__audit`) gets one more in the database name (`a_dbt_test___audit`), so exactly
two always separate levels and the mapping stays reversible.

Case: names are case-insensitive, as Spark SQL resolves them. A dbt name maps to its lower-cased
identifier (`DailyTotals.sql` is the table `dailytotals`, `+schema: Marts` the level `marts`), and
that is the id every Lance tool sees in `__manifest`. Two dbt names that differ only in case are
one table, as they are one table for Spark; two nodes that name one table fail when dbt parses the
project, naming both (`relation.LancensRelation.create_from`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lancens.namespace import errors, ids
from dbt.adapters.lancens.text.quoting import quote

SEPARATOR = "__"
ROOT_DATABASE = "default"
_LEVEL = re.compile(r"^[a-z0-9](?:[a-z0-9_]*[a-z0-9])?$")
_TABLE = re.compile(r"^[a-z0-9_]+$")
# Inside a level, a run of n >= 2 underscores is written with n + 1: a run of exactly two is a separator.
_LEVEL_RUN = re.compile(r"_{2,}")
_ESCAPED_RUN = re.compile(r"_{3,}")
_SEPARATOR_RUN = re.compile(r"(?<!_)__(?!_)")


class InvalidNameError(DbtRuntimeError, ValueError):
    """A schema level, database or table name that dbt-lancens cannot map (the message says why)."""


def validate_level(level: str, what: str = "schema level", position: int = 1) -> str:
    """One namespace level, lower-cased; `position` 0 is the top level, which may not be `default`."""
    normalized = level.lower()
    if not _LEVEL.match(normalized):
        raise InvalidNameError(
            f"Invalid {what} {level!r}: dbt-lancens schema levels use letters, digits and "
            "underscores, and do not start or end with an underscore, because each level is part "
            "of a Spark database name"
        )
    if position == 0 and normalized == ROOT_DATABASE:
        raise InvalidNameError(
            f"Invalid {what} {level!r}: {ROOT_DATABASE!r} is the Spark database of the root namespace"
        )
    return normalized


def validate_table_name(name: str) -> str:
    """A table name, lower-cased: one Spark identifier that Spark SQL can name unquoted."""
    normalized = name.lower()
    if not _TABLE.match(normalized):
        raise InvalidNameError(
            f"Invalid table name {name!r}: dbt-lancens table names use letters, digits and "
            "underscores, so Spark SQL can name them unquoted"
        )
    return normalized


def schema_to_namespace(schema: str) -> list[str]:
    """`analytics.marts` -> `["analytics", "marts"]`, validating every level."""
    if not schema:
        raise InvalidNameError("Invalid schema name: it is empty")
    return [validate_level(level, "schema level", i) for i, level in enumerate(schema.split("."))]


def namespace_to_schema(namespace_id: Sequence[str]) -> str:
    return ".".join(namespace_id)


def table_id(schema: str, identifier: str, *, check_length: bool = True) -> list[str]:
    """The namespace id of table `identifier` in `schema`, checked against the engine's own rule for
    ids too (its length: the id names the table's directory), so a name the engine would refuse
    when the table is written fails where every other name does, when dbt parses the project.

    `check_length=False` leaves the length to the write: a data test's relation is made at parse
    whether or not its failures are ever stored, and dbt's generic test names run long."""
    table = [*schema_to_namespace(schema), validate_table_name(identifier)]
    if not check_length:
        return table
    try:
        return ids.validate(table, what="table", allow_root=False)
    except errors.InvalidInputError as exc:
        reason = exc.message.removeprefix("id: ")
        raise InvalidNameError(
            f"Invalid table name: the namespace refuses the {reason}; name the node another way "
            "(its alias or schema)"
        ) from exc


def relation_table_id(relation: object) -> list[str]:
    """The table id of a dbt relation object or of a string `schema.table` (the schema may be dotted)."""
    if isinstance(relation, str):
        schema, dot, name = relation.strip().rpartition(".")
        if not dot:
            raise InvalidNameError(f"a relation string must be `schema.table`, got {relation!r}")
        return table_id(schema, name)
    return table_id(getattr(relation, "schema", None) or "", getattr(relation, "identifier", None) or "")


def database_name(namespace_id: Sequence[str]) -> str:
    """The Spark database of a namespace (levels joined by `__`; the root is `default`).

    `namespace_id` is an id as the namespace stores it: lower case (Spark lower-cases database
    names, so an upper-case level could not be read back)."""
    for position, level in enumerate(namespace_id):
        if validate_level(level, "namespace level", position) != level:
            raise InvalidNameError(f"Invalid namespace level {level!r}: namespace ids are lower case")
    escaped = (_LEVEL_RUN.sub(lambda run: run.group() + "_", level) for level in namespace_id)
    return SEPARATOR.join(escaped) if namespace_id else ROOT_DATABASE


def namespace_id(database: str) -> list[str]:
    """The namespace a Spark database mirrors; inverse of `database_name`. Spark database names are
    case-insensitive, so `Sales__EU` is `["sales", "eu"]`."""
    database = database.lower()
    if database == ROOT_DATABASE:
        return []
    parts = _SEPARATOR_RUN.split(database)
    levels = [_ESCAPED_RUN.sub(lambda run: run.group()[1:], part) for part in parts]
    return [validate_level(level, "database name level", i) for i, level in enumerate(levels)]


def qualified_name(object_id: Sequence[str]) -> str:
    """`database`.`table` (quoted) of a table or view id."""
    return f"{quote(database_name(object_id[:-1]))}.{quote(object_id[-1])}"
