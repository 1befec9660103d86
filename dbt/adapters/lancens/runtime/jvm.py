"""Every use of Spark's JVM through py4j, in one module.

Spark Connect has no JVM gateway: a Connect runtime replaces exactly what is here (activating the
session for a thread, reading a statement with Spark's parser, Java error messages) and nothing
else in the adapter touches `_jvm`, `_jsparkSession` or py4j.
"""

from __future__ import annotations

from typing import Any

from py4j.protocol import Py4JJavaError
from pyspark.sql import SparkSession
from pyspark.sql import types as T

from dbt.adapters.lancens.runtime import plans
from dbt.adapters.lancens.spark.java_classes import java_class


def activate(spark: SparkSession, job_description: str | None) -> None:
    """Make `spark` the JVM's active session for the calling thread (Python data sources resolve
    through it, and a new dbt thread has none), and name the jobs the thread starts (a Spark local
    property, per thread as well)."""
    jvm_session_class = java_class(spark._jvm, "org.apache.spark.sql.SparkSession")  # type: ignore[arg-type]
    jvm_session_class.setActiveSession(spark._jsparkSession)
    spark.sparkContext.setJobDescription(job_description)  # type: ignore[arg-type]


def java_error_message(exc: BaseException) -> str | None:
    """The Java exception's own message for a py4j error, else None."""
    if isinstance(exc, Py4JJavaError):
        return str(exc.java_exception.getMessage())
    return None


def parse_statement(spark: SparkSession, statement: str) -> plans.Statement | None:
    """What `statement` asks for when it is DDL or DML on a namespace object, else None.

    Namespace objects are databases (one name part) and database.table (two); other shapes (a
    temporary view's one-part name, a three-part name) and other statements are Spark's business."""
    plan = spark._jsparkSession.sessionState().sqlParser().parsePlan(statement)  # type: ignore[union-attr]
    kind = plan.getClass().getSimpleName()
    if kind == "DropNamespace":
        parts = _strings(plan.namespace().multipartIdentifier())
        if len(parts) != 1:
            return None
        return plans.DropNamespace(parts[0], bool(plan.ifExists()), bool(plan.cascade()))
    if kind in ("DropTable", "DropView"):
        name = _strings(plan.child().nameParts())
        return plans.DropRelation(name, bool(plan.ifExists())) if len(name) == 2 else None
    if kind == "CreateTable":
        name = _strings(plan.name().nameParts())
        if len(name) != 2:
            return None
        schema = _python_type(_char_varchar(spark).replaceCharVarcharWithStringInSchema(plan.tableSchema()))
        return plans.CreateTable(name, bool(plan.ignoreIfExists()), _provider(plan), schema=schema)
    if kind in ("CreateTableAsSelect", "ReplaceTableAsSelect"):
        name = _strings(plan.name().nameParts())
        if len(name) != 2:
            return None
        replace = kind == "ReplaceTableAsSelect"
        if_not_exists = False if replace else bool(plan.ignoreIfExists())
        return plans.CreateTable(
            name,
            if_not_exists,
            _provider(plan),
            query_sql=_source_text(statement, plan.query()),
            replace=replace,
        )
    if kind == "AddColumns":
        name = _strings(plan.table().multipartIdentifier())
        if len(name) != 2:
            return None
        columns = []
        for column in _scala_list(plan.columnsToAdd()):
            spark_type = _python_type(_char_varchar(spark).replaceCharVarcharWithString(column.dataType()))
            default = column.default().get().originalSQL() if column.default().isDefined() else None
            columns.append(plans.AddColumn(T.StructField(column.colName(), spark_type), default))
        return plans.AddColumns(name, columns)
    if kind in ("DropColumns", "AlterColumns", "TruncateTable"):
        return _table_change(spark, plan, kind)
    if kind in ("UpdateTable", "DeleteFromTable"):
        return _row_level(plan, kind)
    if kind == "RenameTable":
        name, new_name = _strings(plan.child().multipartIdentifier()), _strings(plan.newName())
        return plans.RenameRelation(name, new_name) if len(name) == 2 and len(new_name) <= 2 else None
    if kind in _UNAPPLIED:
        name = _strings(plan.child().multipartIdentifier())
        return plans.Unapplied(name, _UNAPPLIED[kind]) if len(name) == 2 else None
    return None


# Spark's plans of DDL that would change only the catalog mirror of a namespace object.
_UNAPPLIED = {
    "SetTableProperties": "ALTER TABLE ... SET TBLPROPERTIES",
    "UnsetTableProperties": "ALTER TABLE ... UNSET TBLPROPERTIES",
    "SetViewProperties": "ALTER VIEW ... SET TBLPROPERTIES",
    "UnsetViewProperties": "ALTER VIEW ... UNSET TBLPROPERTIES",
    "RenameColumn": "ALTER TABLE ... RENAME COLUMN",
    "ReplaceColumns": "ALTER TABLE ... REPLACE COLUMNS",
    "SetTableLocation": "ALTER TABLE ... SET LOCATION",
    "CommentOnTable": "COMMENT ON TABLE",
    "AlterViewAs": "ALTER VIEW ... AS",
}


def _table_change(spark: SparkSession, plan: Any, kind: str) -> plans.Statement | None:
    """DROP COLUMNS, ALTER COLUMN ... TYPE and TRUNCATE TABLE of a database.table."""
    name = _strings(plan.table().multipartIdentifier())
    if len(name) != 2:
        return None
    if kind == "TruncateTable":
        return plans.Truncate(name)
    if kind == "DropColumns":
        columns = [".".join(_strings(column.name())) for column in _scala_list(plan.columnsToDrop())]
        return plans.DropColumns(name, columns, bool(plan.ifExists()))
    types: list[tuple[str, T.DataType | None]] = []
    for spec in _scala_list(plan.specs()):
        new_type = spec.newDataType()
        spark_type = None
        if new_type.isDefined():
            spark_type = _python_type(_char_varchar(spark).replaceCharVarcharWithString(new_type.get()))
        types.append((".".join(_strings(spec.column().name())), spark_type))
    return plans.AlterColumnTypes(name, types)


def _row_level(plan: Any, kind: str) -> plans.RowLevel | None:
    relation = plan.table()
    alias = None
    while relation.getClass().getSimpleName() == "SubqueryAlias":  # UPDATE t AS x ...
        alias = str(relation.alias())
        relation = relation.child()
    if kind == "UpdateTable":
        assignments = [
            (_assigned_column(assignment.key(), alias), assignment.value().sql())
            for assignment in _scala_list(plan.assignments())
        ]
        condition = plan.condition().get().sql() if plan.condition().isDefined() else "true"
    else:
        assignments, condition = [], plan.condition().sql()
    return plans.RowLevel(_strings(relation.multipartIdentifier()), assignments, condition, alias)


def _assigned_column(key: Any, alias: str | None) -> str:
    """The column an UPDATE assigns, without the table alias that may qualify it (`x.a` is `a`)."""
    parts = _strings(key.nameParts())
    if alias is not None and len(parts) > 1 and parts[0].lower() == alias.lower():
        parts = parts[1:]
    return ".".join(parts)


def _source_text(statement: str, node: Any) -> str:
    """The part of `statement` a parsed node came from (a CTAS's query, run again through `sql`)."""
    origin = node.origin()
    if not origin.startIndex().isDefined() or not origin.stopIndex().isDefined():
        raise ValueError(f"Spark's parser did not say where the query starts in: {statement}")
    return statement[origin.startIndex().get() : origin.stopIndex().get() + 1]


def _provider(plan: Any) -> str | None:
    provider = plan.tableSpec().provider()
    return str(provider.get()) if provider.isDefined() else None


def _python_type(jvm_type: Any) -> Any:
    """PySpark's twin of a JVM DataType (through its JSON form, as PySpark itself does)."""
    return T._parse_datatype_json_string(jvm_type.json())


def _char_varchar(spark: SparkSession) -> Any:
    """VARCHAR(n)/CHAR(n) are strings to Lance, as they are to Spark's readers."""
    return java_class(spark._jvm, "org.apache.spark.sql.catalyst.util.CharVarcharUtils")  # type: ignore[arg-type]


def _strings(sequence: Any) -> list[str]:
    return [str(item) for item in _scala_list(sequence)]


def _scala_list(sequence: Any) -> list[Any]:
    iterator = sequence.iterator()
    items = []
    while iterator.hasNext():
        items.append(iterator.next())
    return items
