"""DDL written as SQL (hooks, `run-operation`, `run_query`) applied to the namespace, not to Spark.

Spark's session catalog is an in-memory mirror of the namespace: `DROP SCHEMA ... CASCADE` run by
Spark would forget the database and leave every Lance table in place, and `CREATE TABLE` would make
a Spark-managed table outside the root. These statements are therefore read with Spark's own parser
and carried out by the engine (the catalog mirror follows):

* `DROP SCHEMA|DATABASE [IF EXISTS] s [CASCADE]`, `DROP TABLE|VIEW [IF EXISTS] s.t`
* `CREATE TABLE [IF NOT EXISTS] s.t (column type, ...)`: an empty Lance table (version 1)
* `CREATE [OR REPLACE] TABLE s.t AS SELECT ...`, `REPLACE TABLE s.t AS SELECT ...`: the query's
  rows written through the `lance` data source as one version (a replace is the next version)
* `ALTER TABLE s.t ADD COLUMN[S] ...`: all-null columns through Lance schema evolution (so only
  `DEFAULT NULL` is accepted); `ALTER TABLE s.t DROP COLUMN[S] ...` and
  `ALTER TABLE s.t ALTER COLUMN c TYPE t`: the table rewritten without / with the cast column
* `TRUNCATE TABLE s.t`: the next version has no rows (same schema)

Any other DDL goes to Spark unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from dbt_common.exceptions import DbtRuntimeError
from pyspark.sql import types as T

from dbt.adapters.lancens.commits.writes import write_arrow, write_frame
from dbt.adapters.lancens.core.names import validate_table_name
from dbt.adapters.lancens.core.relation import LancensRelation
from dbt.adapters.lancens.core.runtime import LancensRuntime
from dbt.adapters.lancens.materializations import merge, schema_evolution
from dbt.adapters.lancens.metadata import schemas
from dbt.adapters.lancens.metadata.relations import drop_relation, is_view
from dbt.adapters.lancens.namespace import errors
from dbt.adapters.lancens.spark import catalog
from dbt.adapters.lancens.spark.types import spark_arrow_schema
from dbt.adapters.lancens.statements.dml import scala_list

_LEADING_COMMENTS = re.compile(r"^(?:\s+|/\*.*?\*/|--[^\n]*\n?)*", re.DOTALL)
_CANDIDATE = re.compile(
    r"^(drop|create\s+table|create\s+or\s+replace\s+table|replace\s+table|alter\s+table|truncate\s+table)\b",
    re.IGNORECASE,
)
# The statements applied here, with where each keeps its object's name and how many parts a
# namespace object has (a database; database.table). Other shapes (a temporary view's one-part
# name, a three-part name) are Spark's own business and go to Spark.
_NAMES: dict[str, tuple[Callable[[Any], Any], int]] = {
    "DropNamespace": (lambda plan: plan.namespace().multipartIdentifier(), 1),
    "DropTable": (lambda plan: plan.child().nameParts(), 2),
    "DropView": (lambda plan: plan.child().nameParts(), 2),
    "CreateTable": (lambda plan: plan.name().nameParts(), 2),
    "CreateTableAsSelect": (lambda plan: plan.name().nameParts(), 2),
    "ReplaceTableAsSelect": (lambda plan: plan.name().nameParts(), 2),
    "AddColumns": (lambda plan: plan.table().multipartIdentifier(), 2),
    "DropColumns": (lambda plan: plan.table().multipartIdentifier(), 2),
    "AlterColumns": (lambda plan: plan.table().multipartIdentifier(), 2),
    "TruncateTable": (lambda plan: plan.table().multipartIdentifier(), 2),
}


def parse_namespace_ddl(runtime: LancensRuntime, statement: str) -> Any | None:
    """Spark's logical plan for `statement` when it is DDL this module applies, else None."""
    if not _CANDIDATE.match(_LEADING_COMMENTS.sub("", statement, count=1)):
        return None
    parser = runtime.spark._jsparkSession.sessionState().sqlParser()  # type: ignore[attr-defined]
    plan = parser.parsePlan(statement)
    handled = _NAMES.get(plan.getClass().getSimpleName())
    if handled is None:
        return None
    name_of, parts = handled
    return plan if len(scala_list(name_of(plan))) == parts else None


def execute(runtime: LancensRuntime, plan: Any) -> None:
    """Carry out a plan returned by `parse_namespace_ddl` through the engine."""
    kind = plan.getClass().getSimpleName()
    if kind == "DropNamespace":
        _drop_namespace(runtime, plan)
    elif kind in ("DropTable", "DropView"):
        _drop_relation(runtime, plan)
    elif kind == "CreateTable":
        _create_table(runtime, plan)
    elif kind in ("CreateTableAsSelect", "ReplaceTableAsSelect"):
        _create_table_as(runtime, plan, replace=kind == "ReplaceTableAsSelect")
    elif kind == "DropColumns":
        _drop_columns(runtime, plan)
    elif kind == "AlterColumns":
        _alter_column_types(runtime, plan)
    elif kind == "TruncateTable":
        _truncate(runtime, plan)
    else:
        _add_columns(runtime, plan)


def _drop_namespace(runtime: LancensRuntime, plan: Any) -> None:
    namespace_id = _namespace_id(scala_list(plan.namespace().multipartIdentifier()))
    if not plan.ifExists() and not runtime.namespace.namespace_exists(namespace_id):
        raise DbtRuntimeError(f"DROP SCHEMA: namespace {'.'.join(namespace_id)} does not exist")
    try:
        schemas.drop_schema(runtime, namespace_id, cascade=plan.cascade())
    except errors.NamespaceNotEmptyError as exc:  # the engine's own check, without CASCADE
        raise DbtRuntimeError(
            f"DROP SCHEMA: {exc}; add CASCADE to drop its tables, views and child namespaces"
        ) from exc


def _drop_relation(runtime: LancensRuntime, plan: Any) -> None:
    table_id = _table_id(scala_list(plan.child().nameParts()))
    if (
        not plan.ifExists()
        and not runtime.namespace.table_exists(table_id)
        and not is_view(runtime, table_id)
    ):
        raise DbtRuntimeError(f"DROP: {'.'.join(table_id)} does not exist")
    relation = LancensRelation.create(schema=".".join(table_id[:-1]), identifier=table_id[-1])
    drop_relation(runtime, relation)


def _create_table(runtime: LancensRuntime, plan: Any) -> None:
    table_id = _table_id(scala_list(plan.name().nameParts()))
    _require_lance(plan, table_id)
    if _exists_already(runtime, plan, table_id):
        return
    # VARCHAR(n)/CHAR(n) are strings to Lance, as they are to Spark's readers.
    schema = spark_arrow_schema(
        _python_type(_char_varchar(runtime).replaceCharVarcharWithStringInSchema(plan.tableSchema()))
    )
    write_arrow(runtime, table_id, schema.empty_table(), {"dbt_lancens_statement": "CREATE TABLE"})


def _create_table_as(runtime: LancensRuntime, plan: Any, replace: bool) -> None:
    table_id = _table_id(scala_list(plan.name().nameParts()))
    _require_lance(plan, table_id)
    if not replace and _exists_already(runtime, plan, table_id):
        return
    frame = runtime.frame_of_plan(plan.query())
    write_frame(runtime, table_id, frame, "overwrite", {"dbt_lancens_statement": "CREATE TABLE AS SELECT"})


def _add_columns(runtime: LancensRuntime, plan: Any) -> None:
    table_id = _table_id(scala_list(plan.table().multipartIdentifier()))
    fields = []
    for column in scala_list(plan.columnsToAdd()):
        if column.default().isDefined() and column.default().get().originalSQL().strip().lower() != "null":
            raise DbtRuntimeError(
                f"ALTER TABLE {'.'.join(table_id)} ADD COLUMN {column.colName()}: DEFAULT values are "
                "not supported on Lance tables (existing rows get NULL); leave out DEFAULT"
            )
        spark_type = _python_type(_char_varchar(runtime).replaceCharVarcharWithString(column.dataType()))
        struct = T.StructType([T.StructField(column.colName(), spark_type)])
        fields.append(spark_arrow_schema(struct).field(0))
    target = merge.open_target(runtime, table_id)
    schema_evolution.evolve(runtime, target, fields, [], {"dbt_lancens_statement": "ALTER TABLE ADD COLUMNS"})


def _drop_columns(runtime: LancensRuntime, plan: Any) -> None:
    table_id = _table_id(scala_list(plan.table().multipartIdentifier()))
    target = merge.open_target(runtime, table_id)
    existing = {field.name.lower() for field in target.dataset.schema}
    names = [".".join(scala_list(column.name())) for column in scala_list(plan.columnsToDrop())]
    missing = [name for name in names if name.lower() not in existing]
    if missing and not plan.ifExists():
        raise DbtRuntimeError(
            f"ALTER TABLE {'.'.join(table_id)} DROP COLUMNS: no column {', '.join(missing)}"
        )
    dropped = [name for name in names if name.lower() in existing]
    if dropped:
        schema_evolution.evolve(
            runtime, target, [], dropped, {"dbt_lancens_statement": "ALTER TABLE DROP COLUMNS"}
        )


def _alter_column_types(runtime: LancensRuntime, plan: Any) -> None:
    """`ALTER COLUMN c TYPE t` (nothing else an ALTER COLUMN can say is a Lance change)."""
    table_id = _table_id(scala_list(plan.table().multipartIdentifier()))
    target = merge.open_target(runtime, table_id)
    existing = {field.name.lower() for field in target.dataset.schema}
    types = {}
    for spec in scala_list(plan.specs()):
        name = ".".join(scala_list(spec.column().name()))
        if not spec.newDataType().isDefined() or name.lower() not in existing:
            raise DbtRuntimeError(
                f"ALTER TABLE {'.'.join(table_id)} ALTER COLUMN {name}: only `TYPE <type>` of an existing "
                "column is supported on Lance tables"
            )
        spark_type = _python_type(
            _char_varchar(runtime).replaceCharVarcharWithString(spec.newDataType().get())
        )
        types[name.lower()] = (
            spark_arrow_schema(T.StructType([T.StructField(name, spark_type)])).field(0).type
        )
    schema_evolution.retype(
        runtime, target, types, {"dbt_lancens_statement": "ALTER TABLE ALTER COLUMN TYPE"}
    )


def _truncate(runtime: LancensRuntime, plan: Any) -> None:
    table_id = _table_id(scala_list(plan.table().multipartIdentifier()))
    target = merge.open_target(runtime, table_id)
    merge.overwrite(
        runtime, target, target.dataset.schema.empty_table(), {"dbt_lancens_statement": "TRUNCATE TABLE"}
    )


def _exists_already(runtime: LancensRuntime, plan: Any, table_id: list[str]) -> bool:
    """CREATE of an existing table: True (nothing to do) with IF NOT EXISTS, else an error."""
    if not runtime.namespace.table_exists(table_id):
        return False
    if plan.ignoreIfExists():
        return True
    raise DbtRuntimeError(f"CREATE TABLE: {'.'.join(table_id)} already exists")


def _require_lance(plan: Any, table_id: list[str]) -> None:
    provider = plan.tableSpec().provider()
    if provider.isDefined() and provider.get().lower() != "lance":
        raise DbtRuntimeError(
            f"CREATE TABLE {'.'.join(table_id)} USING {provider.get()}: tables in a dbt-lancens "
            "root are Lance tables (leave out USING)"
        )


def _python_type(jvm_type: Any) -> T.DataType:
    """PySpark's twin of a JVM DataType (through its JSON form, as PySpark itself does)."""
    return T._parse_datatype_json_string(jvm_type.json())


def _char_varchar(runtime: LancensRuntime) -> Any:
    return runtime.spark._jvm.org.apache.spark.sql.catalyst.util.CharVarcharUtils  # type: ignore[attr-defined]


def _namespace_id(parts: list[str]) -> list[str]:
    """`[database]` (checked by `parse_namespace_ddl`) as a namespace id."""
    (database,) = parts
    return catalog.namespace_id(database)


def _table_id(parts: list[str]) -> list[str]:
    """`[database, table]` (checked by `parse_namespace_ddl`) as a table id."""
    database, table = parts
    return [*catalog.namespace_id(database), validate_table_name(table.lower())]
