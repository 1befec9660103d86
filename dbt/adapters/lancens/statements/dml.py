"""`UPDATE` and `DELETE` on namespace tables, which Spark refuses for Python data sources.

Spark's own parser reads the statement (so every expression keeps Spark SQL semantics); the new
table content is computed by Spark from the current version and committed as the next version in
one overwrite commit through the engine. Updated columns are cast back to their type.
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from dbt.adapters.lancens.commits.writes import write_frame
from dbt.adapters.lancens.definitions.names import namespace_id
from dbt.adapters.lancens.runtime import plans
from dbt.adapters.lancens.runtime.process import LancensRuntime
from dbt.adapters.lancens.spark.column_names import ColumnMap, column_names, fold
from dbt.adapters.lancens.text.quoting import quote


def execute(runtime: LancensRuntime, statement: str) -> int:
    """Apply the statement as one new version of the table; return that version."""
    parsed = runtime.parse_statement(statement)
    if not isinstance(parsed, plans.RowLevel):
        raise ValueError(f"not an UPDATE or DELETE statement on a namespace table: {statement[:200]}")
    if len(parsed.name) != 2:
        raise ValueError(f"UPDATE/DELETE needs a table named database.table, got {'.'.join(parsed.name)}")
    database, table = parsed.name
    name = f"{quote(database)}.{quote(table)}"
    current = runtime.sql(f"SELECT * FROM {name}")
    # the statement's expressions may qualify columns with its table alias: the new content's
    # query reads the table under that alias
    source = f"{name} AS {quote(parsed.alias)}" if parsed.alias else name
    result = _new_content(runtime, source, current, parsed)
    return write_frame(
        runtime,
        [*namespace_id(database), table.lower()],
        result,
        "overwrite",
        {"dbt_lancens_statement": statement.strip()[:200]},
    )


def _new_content(
    runtime: LancensRuntime, source: str, current: DataFrame, parsed: plans.RowLevel
) -> DataFrame:
    condition = f"coalesce(({parsed.condition}), false)"
    if not parsed.assignments:
        return runtime.sql(f"SELECT * FROM {source} WHERE NOT {condition}")
    known = column_names(current.schema.names)
    targets = [fold(column) for column, _ in parsed.assignments]
    twice = sorted({column for column in targets if targets.count(column) > 1})
    if twice:  # as Spark refuses it: which value would win is not obvious
        raise ValueError(f"UPDATE {source}: column(s) {twice} assigned more than once")
    updates = ColumnMap(parsed.assignments)
    unknown = sorted(column for column in updates if column not in known)
    if unknown:
        raise ValueError(f"UPDATE {source}: no such column(s) {unknown}")
    columns = [
        f"CAST(CASE WHEN {condition} THEN ({updates[field.name]}) ELSE {quote(field.name)} END "
        f"AS {field.dataType.simpleString()}) AS {quote(field.name)}"
        if field.name in updates
        else quote(field.name)
        for field in current.schema.fields
    ]
    return runtime.sql(f"SELECT {', '.join(columns)} FROM {source}")
