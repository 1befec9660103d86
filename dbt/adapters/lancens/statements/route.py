"""Which SQL statements the adapter carries out itself, through the engine, instead of Spark.

`UPDATE`/`DELETE` on a namespace table (Spark refuses them for Python data sources) and DDL on
namespace objects (Spark's catalog is only a mirror: `DROP SCHEMA ... CASCADE` run by Spark would
forget the database and leave every Lance table in place). A regular expression on the first
words decides cheaply whether Spark's parser needs to look at all; the parser decides the rest.
"""

from __future__ import annotations

import re

from dbt.adapters.lancens.definitions.sql_text import without_leading_comments
from dbt.adapters.lancens.runtime import plans
from dbt.adapters.lancens.runtime.process import LancensRuntime
from dbt.adapters.lancens.statements import ddl, dml

_ROW_LEVEL = re.compile(r"^(update|delete)\b", re.IGNORECASE)
_DDL = re.compile(
    r"^(drop|create\s+table|create\s+or\s+replace\s+table|replace\s+table|alter\s+table|alter\s+view"
    r"|truncate\s+table|comment\s+on\s+table)\b",
    re.IGNORECASE,
)


def apply(runtime: LancensRuntime, statement: str) -> bool:
    """Carry out `statement` through the engine when it is ours; False when Spark should run it."""
    if is_row_level(statement):
        dml.execute(runtime, statement)
        return True
    if not _DDL.match(without_leading_comments(statement)):
        return False
    parsed = runtime.parse_statement(statement)
    if parsed is None or isinstance(parsed, plans.RowLevel):
        return False
    ddl.execute(runtime, parsed)
    return True


def is_row_level(statement: str) -> bool:
    """An UPDATE or DELETE (after any leading comments)."""
    return bool(_ROW_LEVEL.match(without_leading_comments(statement)))
