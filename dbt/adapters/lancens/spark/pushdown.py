"""Filter pushdown for the ``lance`` relations a SQL query scans exactly once.

Why this exists: PySpark 4.3 plans a Python data source's reader once per *relation* and hands that
reader to every scan of the relation. Spark's analyser gives all references to one table in a query
the same relation (a self-union, a self-join, a CTE read twice, a subquery on the table), so a reader
that kept one scan's filters would apply them to the other scans: `select id from t where x > 50
union all select id from t` lost the unfiltered half. The ``lance`` reader therefore filters only
when its ``filter_pushdown`` option says the relation is scanned once.

This module proves that for a SQL query with Spark's own analyser: it analyses the query, walks the
analysed plan (CTE definitions counted as often as they are referenced, subqueries, views) and counts
the scans of every ``lance`` relation, identified by the table object Spark shares among references.
A reference that is the only scan of its relation gets ``WITH ('filter_pushdown' = 'true')`` inserted
after its name in the SQL text, at the position Spark's parser recorded. The rewritten query is
analysed and checked again; if anything differs from what was proven, the original query is used.

The frame returned must be executed once (one action): a later query built on top of it with other
filters would re-plan the shared relation (see docs/spark-datasource.md). Commands (DDL, INSERT) run
when analysed, so they are never rewritten. Without a JVM gateway (Spark Connect) queries are returned
unchanged: correct, without pushdown.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, SparkSession

OPTION = "filter_pushdown"
_CLAUSE = f" WITH ('{OPTION}' = 'true')"
_SOURCE_PREFIX = "lance"
_RECURSIVE = frozenset({"UnionLoop", "UnionLoopRef"})


@dataclass(frozen=True)
class _Scan:
    """One ``lance`` relation in an analysed plan, and how often the query scans it."""

    table: int  # identity of the table object Spark shares among the references to one table
    times: int
    start: int | None  # span of the reference in `sql_text` (inclusive), when Spark recorded one
    stop: int | None
    sql_text: str | None
    has_options: bool
    pushdown: bool


class _Recursive(Exception):
    """The plan has a recursive CTE: scan counts are unbounded, so nothing is pushed."""


def sql_with_pushdown(spark: SparkSession, statement: str) -> DataFrame:
    """``spark.sql(statement)``, with filter pushdown on for the relations the query scans once."""
    frame = spark.sql(statement)
    jvm = getattr(spark, "_jvm", None)
    if jvm is None:
        return frame
    analyzed = frame._jdf.queryExecution().analyzed()
    if _is_command(jvm, frame._jdf.logicalPlan()) or _is_command(jvm, analyzed):
        return frame  # a command ran when it was analysed: running it again would repeat it
    try:
        scans = _scans(jvm, analyzed)
    except _Recursive:
        return frame
    spans = _exclusive_spans(scans, statement)
    if not spans:
        return frame
    rewritten = _insert_option(statement, spans)
    candidate = spark.sql(rewritten)
    try:
        checked = _scans(jvm, candidate._jdf.queryExecution().analyzed())
    except _Recursive:
        return frame
    return candidate if _pushdown_is_exclusive(checked, len(spans)) else frame


def _is_command(jvm: Any, plan: Any) -> bool:
    if plan.getClass().getSimpleName() == "CommandResult":
        return True
    command = jvm.java.lang.Class.forName("org.apache.spark.sql.catalyst.plans.logical.Command")
    return bool(command.isInstance(plan))


def _exclusive_spans(scans: list[_Scan], statement: str) -> list[tuple[int, int]]:
    """Spans of the references in `statement` whose relation no other scan shares."""
    per_table: dict[int, int] = defaultdict(int)
    for scan in scans:
        per_table[scan.table] += scan.times
    spans = []
    for scan in scans:
        if per_table[scan.table] != 1 or scan.times != 1 or scan.has_options:
            continue
        if scan.sql_text != statement or scan.start is None or scan.stop is None:
            continue
        if not _is_name(statement[scan.start : scan.stop + 1]):
            continue
        spans.append((scan.start, scan.stop))
    return spans


def _pushdown_is_exclusive(scans: list[_Scan], expected: int) -> bool:
    """Every relation with pushdown on is scanned once, and there are as many as were marked."""
    per_table: dict[int, int] = defaultdict(int)
    for scan in scans:
        per_table[scan.table] += scan.times
    pushed = [scan for scan in scans if scan.pushdown]
    return len(pushed) == expected and all(per_table[s.table] == 1 and s.times == 1 for s in pushed)


def _is_name(text: str) -> bool:
    """A table name as written in SQL: dotted parts, each a word or a back-quoted identifier."""
    if not text or text[0] in ".(" or text[-1] == ".":
        return False
    inside_quotes = False
    for char in text:
        if char == "`":
            inside_quotes = not inside_quotes
        elif not inside_quotes and not (char.isalnum() or char in "_."):
            return False
    return not inside_quotes


def _insert_option(statement: str, spans: list[tuple[int, int]]) -> str:
    """`statement` with the pushdown options clause after each span, last span first."""
    for _, stop in sorted(spans, reverse=True):
        statement = statement[: stop + 1] + _CLAUSE + statement[stop + 1 :]
    return statement


def _scans(jvm: Any, root: Any) -> list[_Scan]:
    """Every ``lance`` relation of an analysed plan with the number of times the query scans it."""
    walk = _Walk(jvm)
    walk.visit(root, None)
    times = walk.cte_times()
    return [
        _Scan(
            table=table,
            times=1 if cte is None else times[cte],
            start=start,
            stop=stop,
            sql_text=sql_text,
            has_options=has_options,
            pushdown=pushdown,
        )
        for cte, table, start, stop, sql_text, has_options, pushdown in walk.relations
    ]


class _Walk:
    """Collects relations and CTE references of a plan, remembering which CTE definition each is in."""

    def __init__(self, jvm: Any) -> None:
        self.jvm = jvm
        self.relations: list[tuple[int | None, int, int | None, int | None, str | None, bool, bool]] = []
        # CTE id -> the CTE definitions (None: the main query) that reference it, once per reference
        self.references: dict[int, list[int | None]] = defaultdict(list)

    def visit(self, node: Any, cte: int | None) -> None:
        kind = node.getClass().getSimpleName()
        if kind in _RECURSIVE:
            raise _Recursive
        if kind == "CTERelationRef":
            self.references[int(node.cteId())].append(cte)
            return
        if kind == "CTERelationDef":
            cte = int(node.id())
        elif kind == "DataSourceV2Relation":
            self._relation(node, cte)
        for children in (node.children(), node.innerChildren()):
            iterator = children.iterator()
            while iterator.hasNext():
                self.visit(iterator.next(), cte)

    def _relation(self, node: Any, cte: int | None) -> None:
        table = node.table()
        if table.getClass().getSimpleName() != "PythonTable":
            return
        if not str(table.name()).startswith(_SOURCE_PREFIX):
            return
        origin = node.origin()
        options = node.options()
        self.relations.append(
            (
                cte,
                int(self.jvm.System.identityHashCode(table)),
                _option(origin.startIndex()),
                _option(origin.stopIndex()),
                _option(origin.sqlText()),
                not options.isEmpty(),
                str(options.getOrDefault(OPTION, "false")).lower() == "true",
            )
        )

    def cte_times(self) -> dict[int, int]:
        """How many times the query scans each CTE definition (references of references multiply)."""
        memo: dict[int, int] = {}

        def times(cte: int, seen: frozenset[int]) -> int:
            if cte in seen:
                raise _Recursive
            if cte not in memo:
                memo[cte] = sum(
                    1 if site is None else times(site, seen | {cte}) for site in self.references.get(cte, [])
                )
            return memo[cte]

        ids = {cte for cte, *_ in self.relations if cte is not None} | set(self.references)
        return {cte: times(cte, frozenset()) for cte in ids}


def _option(value: Any) -> Any:
    """A Scala ``Option`` as the value or None."""
    return value.get() if value.isDefined() else None
