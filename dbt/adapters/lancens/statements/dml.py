"""`UPDATE` and `DELETE` on namespace tables, which Spark refuses for Python data sources.

Spark's own parser reads the statement (so every expression keeps Spark SQL semantics); the new
table content is computed by Spark from the current version and committed as the next version in
one overwrite commit through the engine. Updated columns are cast back to their type.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pyspark.sql import DataFrame

from dbt.adapters.lancens.commits.writes import write_frame
from dbt.adapters.lancens.core.runtime import LancensRuntime
from dbt.adapters.lancens.spark import catalog

_LEADING_COMMENTS = re.compile(r"^(?:\s+|/\*.*?\*/|--[^\n]*\n?)*", re.DOTALL)
_ROW_LEVEL = re.compile(r"^(update|delete)\b", re.IGNORECASE)


@dataclass(frozen=True)
class RowLevelStatement:
    """What an UPDATE or DELETE asks for, as Spark SQL fragments."""

    table: list[str]  # Spark name parts, e.g. ["analytics__raw", "seed"]
    assignments: list[tuple[str, str]]  # (column, expression); empty for DELETE
    condition: str  # Spark SQL boolean expression


def is_row_level(statement: str) -> bool:
    return bool(_ROW_LEVEL.match(_LEADING_COMMENTS.sub("", statement, count=1)))


def parse(runtime: LancensRuntime, statement: str) -> RowLevelStatement:
    """Parse with Spark's SQL parser (through the JVM), never with regular expressions."""
    jsession = runtime.spark._jsparkSession  # type: ignore[attr-defined]
    plan = jsession.sessionState().sqlParser().parsePlan(statement)
    kind = plan.getClass().getSimpleName()
    if kind == "UpdateTable":
        assignments = [
            (assignment.key().sql().strip("`"), assignment.value().sql())
            for assignment in scala_list(plan.assignments())
        ]
        condition = plan.condition().get().sql() if plan.condition().isDefined() else "true"
    elif kind == "DeleteFromTable":
        assignments, condition = [], plan.condition().sql()
    else:
        raise ValueError(f"not an UPDATE or DELETE statement: {kind}")
    relation = plan.table()
    while relation.getClass().getSimpleName() == "SubqueryAlias":  # UPDATE t AS x ...
        relation = relation.child()
    return RowLevelStatement(list(scala_list(relation.multipartIdentifier())), assignments, condition)


def execute(runtime: LancensRuntime, statement: str) -> int:
    """Apply the statement as one new version of the table; return that version."""
    parsed = parse(runtime, statement)
    if len(parsed.table) != 2:
        raise ValueError(f"UPDATE/DELETE needs a table named database.table, got {'.'.join(parsed.table)}")
    database, table = parsed.table
    name = f"`{database}`.`{table}`"
    current = runtime.sql(f"SELECT * FROM {name}")
    result = _new_content(runtime, name, current, parsed)
    table_id = [*catalog.namespace_id(database), table.lower()]
    return write_frame(
        runtime, table_id, result, "overwrite", {"dbt_lancens_statement": statement.strip()[:200]}
    )


def _new_content(
    runtime: LancensRuntime, name: str, current: DataFrame, parsed: RowLevelStatement
) -> DataFrame:
    condition = f"coalesce(({parsed.condition}), false)"
    if not parsed.assignments:
        return runtime.sql(f"SELECT * FROM {name} WHERE NOT {condition}")
    types = {field.name.lower(): field.dataType.simpleString() for field in current.schema.fields}
    updates = {column.lower(): expression for column, expression in parsed.assignments}
    unknown = sorted(set(updates) - set(types))
    if unknown:
        raise ValueError(f"UPDATE {name}: no such column(s) {unknown}")
    columns = [
        f"CAST(CASE WHEN {condition} THEN ({updates[field.name.lower()]}) ELSE `{field.name}` END "
        f"AS {types[field.name.lower()]}) AS `{field.name}`"
        if field.name.lower() in updates
        else f"`{field.name}`"
        for field in current.schema.fields
    ]
    return runtime.sql(f"SELECT {', '.join(columns)} FROM {name}")


def scala_list(sequence: object) -> list:
    iterator = sequence.iterator()  # type: ignore[attr-defined]
    items = []
    while iterator.hasNext():
        items.append(iterator.next())
    return items
