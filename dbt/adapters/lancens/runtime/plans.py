"""What a SQL statement the adapter applies itself asks for, read by Spark's own parser.

`runtime.jvm.parse_statement` fills these from Spark's logical plan, so every expression and type
keeps Spark SQL semantics; `ddl` and `dml` carry them out through the engine. Names are Spark's
name parts (`["analytics__marts", "orders"]`), checked for their number of parts by the parser.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import types as T


@dataclass(frozen=True)
class DropNamespace:
    database: str
    if_exists: bool
    cascade: bool


@dataclass(frozen=True)
class DropRelation:
    name: list[str]
    if_exists: bool


@dataclass(frozen=True)
class CreateTable:
    """`CREATE TABLE s.t (columns)`, or with `query_sql` a CTAS / `REPLACE TABLE ... AS`."""

    name: list[str]
    if_not_exists: bool
    provider: str | None
    schema: T.StructType = field(default_factory=T.StructType)
    query_sql: str | None = None
    replace: bool = False


@dataclass(frozen=True)
class AddColumn:
    field: T.StructField
    default_sql: str | None


@dataclass(frozen=True)
class AddColumns:
    name: list[str]
    columns: list[AddColumn]


@dataclass(frozen=True)
class DropColumns:
    name: list[str]
    columns: list[str]  # as written (a nested field's parts joined by dots)
    if_exists: bool


@dataclass(frozen=True)
class AlterColumnTypes:
    """`ALTER TABLE s.t ALTER COLUMN c TYPE t`: each column with its new type (None: the ALTER
    COLUMN changes something else, which Lance has no version for)."""

    name: list[str]
    columns: list[tuple[str, T.DataType | None]]


@dataclass(frozen=True)
class Truncate:
    name: list[str]


@dataclass(frozen=True)
class RenameRelation:
    """`ALTER TABLE|VIEW s.t RENAME TO [s2.]t2` (one part: the same database)."""

    name: list[str]
    new_name: list[str]


@dataclass(frozen=True)
class Unapplied:
    """DDL on a namespace object that has no Lance counterpart here (`SET TBLPROPERTIES`, `RENAME
    COLUMN`, ...): run by Spark it would change only the session's catalog mirror, so it is refused."""

    name: list[str]
    what: str  # the statement, as the error names it


@dataclass(frozen=True)
class RowLevel:
    """UPDATE (with `assignments`) or DELETE (without): Spark SQL fragments."""

    name: list[str]
    assignments: list[tuple[str, str]]  # (column, expression)
    condition: str  # a Spark SQL boolean expression
    alias: str | None = None  # `UPDATE s.t AS x ...`: the expressions may name columns `x.column`


Statement = (
    DropNamespace
    | DropRelation
    | CreateTable
    | AddColumns
    | DropColumns
    | AlterColumnTypes
    | Truncate
    | RenameRelation
    | Unapplied
    | RowLevel
)
