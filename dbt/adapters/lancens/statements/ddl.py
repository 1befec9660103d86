"""DDL written as SQL (hooks, `run-operation`, `run_query`) applied to the namespace, not to Spark.

Spark's session catalog is an in-memory mirror of the namespace: `DROP SCHEMA ... CASCADE` run by
Spark would forget the database and leave every Lance table in place, and `CREATE TABLE` would make
a Spark-managed table outside the root. These statements are therefore read with Spark's own parser
(`runtime.jvm.parse_statement`) and carried out by the engine (the catalog mirror follows):

* `DROP SCHEMA|DATABASE [IF EXISTS] s [CASCADE]`, `DROP TABLE|VIEW [IF EXISTS] s.t`
* `CREATE TABLE [IF NOT EXISTS] s.t (column type, ...)`: an empty Lance table (version 1)
* `CREATE [OR REPLACE] TABLE s.t AS SELECT ...`, `REPLACE TABLE s.t AS SELECT ...`: the query's
  rows written as one version (a replace is the next version)
* `ALTER TABLE s.t ADD COLUMN[S] ...`: all-null columns through Lance schema evolution (so only
  `DEFAULT NULL` is accepted); `ALTER TABLE s.t DROP COLUMN[S] ...` and
  `ALTER TABLE s.t ALTER COLUMN c TYPE t`: the table rewritten without / with the cast column
* `TRUNCATE TABLE s.t`: the next version has no rows (same schema)
* `ALTER TABLE|VIEW s.t RENAME TO [s2.]t2`: the engine's rename (no data copied), a clone's holds
  follow it

These statements on a namespace object, which have no Lance counterpart here, are refused (Spark
would change only its mirror, and the statement would seem to succeed): `ALTER TABLE ... SET|UNSET
TBLPROPERTIES`, `RENAME COLUMN`, `REPLACE COLUMNS`, `[PARTITION (...)] SET LOCATION`, `COMMENT ON
TABLE`, `ALTER VIEW ... AS|SET|UNSET TBLPROPERTIES`. Any other DDL goes to Spark unchanged (among
them `COMMENT ON SCHEMA`, `ALTER DATABASE ... SET DBPROPERTIES`, partition and constraint clauses,
which change only Spark's catalog).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dbt_common.exceptions import DbtRuntimeError
from pyspark.sql import types as T

from dbt.adapters.lancens.commits.table_write import open_write
from dbt.adapters.lancens.commits.writes import write_arrow, write_frame
from dbt.adapters.lancens.definitions.names import namespace_id, namespace_to_schema, validate_table_name
from dbt.adapters.lancens.definitions.relation import LancensRelation
from dbt.adapters.lancens.materializations import merge, schema_evolution
from dbt.adapters.lancens.metadata import schemas
from dbt.adapters.lancens.metadata.relations import drop_relation, is_view, rename_relation
from dbt.adapters.lancens.namespace import errors
from dbt.adapters.lancens.runtime import plans
from dbt.adapters.lancens.runtime.process import LancensRuntime
from dbt.adapters.lancens.spark.column_names import column_names
from dbt.adapters.lancens.spark.types import spark_arrow_schema


def execute(runtime: LancensRuntime, statement: plans.Statement) -> None:
    """Carry out a parsed DDL statement through the engine."""
    apply = _APPLY.get(type(statement))
    if apply is None:
        raise ValueError(f"not a DDL statement dbt-lancens applies: {statement}")
    if runtime.branch_landing is not None and apply in (_drop_namespace, _drop_relation, _rename_relation):
        runtime.branch_landing.refuse(type(statement).__name__)  # they change main's objects themselves
    apply(runtime, statement)


def _drop_namespace(runtime: LancensRuntime, statement: plans.DropNamespace) -> None:
    namespace = namespace_id(statement.database)
    if not statement.if_exists and not runtime.namespace.namespace_exists(namespace):
        raise DbtRuntimeError(f"DROP SCHEMA: namespace {'.'.join(namespace)} does not exist")
    try:
        schemas.drop_schema(runtime, namespace, cascade=statement.cascade)
    except errors.NamespaceNotEmptyError as exc:  # the engine's own check, without CASCADE
        raise DbtRuntimeError(
            f"DROP SCHEMA: {exc}; add CASCADE to drop its tables, views and child namespaces"
        ) from exc


def _drop_relation(runtime: LancensRuntime, statement: plans.DropRelation) -> None:
    table_id = _table_id(statement.name)
    if not statement.if_exists and not _exists(runtime, table_id):
        raise DbtRuntimeError(f"DROP: {'.'.join(table_id)} does not exist")
    drop_relation(runtime, _relation(table_id))


def _create_table(runtime: LancensRuntime, statement: plans.CreateTable) -> None:
    table_id = _table_id(statement.name)
    if statement.provider is not None and statement.provider.lower() != "lance":
        raise DbtRuntimeError(
            f"CREATE TABLE {'.'.join(table_id)} USING {statement.provider}: tables in a dbt-lancens "
            "root are Lance tables (leave out USING)"
        )
    if not statement.replace and runtime.namespace.table_exists(table_id):
        if statement.if_not_exists:
            return
        raise DbtRuntimeError(f"CREATE TABLE: {'.'.join(table_id)} already exists")
    if statement.query_sql is None:
        schema = spark_arrow_schema(statement.schema)
        write_arrow(runtime, table_id, schema.empty_table(), {"dbt_lancens_statement": "CREATE TABLE"})
        return
    frame = runtime.sql(statement.query_sql)
    write_frame(runtime, table_id, frame, "overwrite", {"dbt_lancens_statement": "CREATE TABLE AS SELECT"})


def _add_columns(runtime: LancensRuntime, statement: plans.AddColumns) -> None:
    table_id = _table_id(statement.name)
    fields = []
    for column in statement.columns:
        if column.default_sql is not None and column.default_sql.strip().lower() != "null":
            raise DbtRuntimeError(
                f"ALTER TABLE {'.'.join(table_id)} ADD COLUMN {column.field.name}: DEFAULT values are "
                "not supported on Lance tables (existing rows get NULL); leave out DEFAULT"
            )
        fields.append(spark_arrow_schema(T.StructType([column.field])).field(0))
    target = open_write(runtime, table_id, must_exist=True)
    schema_evolution.evolve(target, fields, [], {"dbt_lancens_statement": "ALTER TABLE ADD COLUMNS"})


def _drop_columns(runtime: LancensRuntime, statement: plans.DropColumns) -> None:
    table_id = _table_id(statement.name)
    target = open_write(runtime, table_id, must_exist=True)
    existing = column_names(target.current.schema.names)
    missing = [name for name in statement.columns if name not in existing]
    if missing and not statement.if_exists:
        raise DbtRuntimeError(
            f"ALTER TABLE {'.'.join(table_id)} DROP COLUMNS: no column {', '.join(missing)}"
        )
    dropped = [name for name in statement.columns if name in existing]
    if dropped:
        schema_evolution.evolve(target, [], dropped, {"dbt_lancens_statement": "ALTER TABLE DROP COLUMNS"})


def _alter_column_types(runtime: LancensRuntime, statement: plans.AlterColumnTypes) -> None:
    """`ALTER COLUMN c TYPE t` (nothing else an ALTER COLUMN can say is a Lance change)."""
    table_id = _table_id(statement.name)
    target = open_write(runtime, table_id, must_exist=True)
    existing = column_names(target.current.schema.names)
    types = {}
    for name, spark_type in statement.columns:
        if spark_type is None or name not in existing:
            raise DbtRuntimeError(
                f"ALTER TABLE {'.'.join(table_id)} ALTER COLUMN {name}: only `TYPE <type>` of an existing "
                "column is supported on Lance tables"
            )
        struct = T.StructType([T.StructField(name, spark_type)])
        types[name] = spark_arrow_schema(struct).field(0).type
    schema_evolution.retype(target, types, {"dbt_lancens_statement": "ALTER TABLE ALTER COLUMN TYPE"})


def _truncate(runtime: LancensRuntime, statement: plans.Truncate) -> None:
    target = open_write(runtime, _table_id(statement.name), must_exist=True)
    merge.overwrite(target, target.current.schema.empty_table(), {"dbt_lancens_statement": "TRUNCATE TABLE"})


def _rename_relation(runtime: LancensRuntime, statement: plans.RenameRelation) -> None:
    source_id = _table_id(statement.name)
    database = statement.new_name[:-1] or statement.name[:1]  # `RENAME TO t`: the same database
    target_id = _table_id([*database, statement.new_name[-1]])
    shown = f"ALTER ... RENAME {'.'.join(source_id)} TO {'.'.join(target_id)}"
    if not _exists(runtime, source_id):
        raise DbtRuntimeError(f"{shown}: {'.'.join(source_id)} does not exist")
    if _exists(runtime, target_id):
        raise DbtRuntimeError(f"{shown}: {'.'.join(target_id)} already exists")
    rename_relation(runtime, _relation(source_id), _relation(target_id))


def _refuse(runtime: LancensRuntime, statement: plans.Unapplied) -> None:
    raise DbtRuntimeError(
        f"{statement.what} on {'.'.join(statement.name)}: dbt-lancens does not apply this statement to "
        "the namespace (Spark would change only its in-memory catalog); the README lists those it applies"
    )


def _exists(runtime: LancensRuntime, object_id: list[str]) -> bool:
    """A table or a view of that id is in the namespace."""
    return runtime.namespace.table_exists(object_id) or is_view(runtime, object_id)


def _relation(table_id: list[str]) -> LancensRelation:
    return LancensRelation.create(schema=namespace_to_schema(table_id[:-1]), identifier=table_id[-1])


# How each DDL statement is carried out (UPDATE/DELETE are `dml`'s).
_APPLY: dict[type, Callable[[LancensRuntime, Any], None]] = {
    plans.DropNamespace: _drop_namespace,
    plans.DropRelation: _drop_relation,
    plans.CreateTable: _create_table,
    plans.AddColumns: _add_columns,
    plans.DropColumns: _drop_columns,
    plans.AlterColumnTypes: _alter_column_types,
    plans.Truncate: _truncate,
    plans.RenameRelation: _rename_relation,
    plans.Unapplied: _refuse,
}


def _table_id(parts: list[str]) -> list[str]:
    """`[database, table]` (two parts, checked by the parser) as a table id."""
    database, table = parts
    return [*namespace_id(database), validate_table_name(table.lower())]
