"""Which parser reads a statement the adapter may apply itself: Spark's own, or the Connect reader.

A local session has Spark's parser in its JVM (`core.jvm.parse_statement`), the reference for
every statement shape. A Spark Connect client has no JVM, so it reads the same shapes with
`connect_parse`, whose column types come from the server's DDL parser.
"""

from __future__ import annotations

from dbt.adapters.lancens.core import jvm
from dbt.adapters.lancens.core.runtime import LancensRuntime
from dbt.adapters.lancens.statements import connect_parse, plans


def parse_statement(runtime: LancensRuntime, statement: str) -> plans.Statement | None:
    """What `statement` asks for when it is DDL or DML on a namespace object, else None."""
    if runtime.is_remote:
        return connect_parse.parse_statement(statement, runtime.spark._parse_ddl)  # type: ignore[attr-defined]
    return jvm.parse_statement(runtime.spark, statement)
