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

Column pruning rides on the same proof (PySpark 4.3's Python sources have none of their own): such
a scan also gets ``'read_columns'``, the positions of the relation's columns the plan can use, and
the reader returns the other columns as nulls. A column counts as used when any plan node's
expressions reference it, when the query (or a subquery) returns it, or when it reaches a node that
uses its children's rows whole or by position (set operations, ``DISTINCT``, CTE definitions and
every node kind not listed in ``_EXPLICIT``): there every column of the children counts.

The frame returned must be executed once (one action): a later query built on top of it with other
filters would re-plan the shared relation (see docs/spark-datasource.md). Commands (DDL, INSERT) run
when analysed, so they are never rewritten. Without a JVM gateway (Spark Connect) queries are returned
unchanged: correct, without pushdown.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from dbt.adapters.lancens.spark.java_classes import java_class, seq_elements
from dbt.adapters.lancens.text.yes_no import yes_or_no

OPTION = "filter_pushdown"
READ_COLUMNS = "read_columns"
_SOURCE_PREFIX = "lance"
_RECURSIVE = frozenset({"UnionLoop", "UnionLoopRef"})
# Plan nodes that use their children's columns only through their expressions' references, and
# pass the columns they keep on under the same ids. Below any other node every column counts.
_EXPLICIT = frozenset(
    {
        "Project",
        "Filter",
        "Aggregate",
        "Join",
        "Sort",
        "SubqueryAlias",
        "View",
        "GlobalLimit",
        "LocalLimit",
        "Offset",
        "Window",
        "Generate",
        "Sample",
        "RepartitionByExpression",
        "Repartition",
        "ResolvedHint",
        "DataSourceV2Relation",
        "LocalRelation",
        "OneRowRelation",
        "Range",
    }
)
_COMMAND_CLASS = "org.apache.spark.sql.catalyst.plans.logical.Command"
_EXPRESSION_ID = re.compile(r"#(\d+)")


@dataclass(frozen=True)
class _Scan:
    """One ``lance`` relation in an analysed plan, and how often the query scans it."""

    table: int  # identity of the table object Spark shares among the references to one table
    times: int
    width: int  # the relation's number of columns
    start: int | None  # span of the reference in `sql_text` (inclusive), when Spark recorded one
    stop: int | None
    sql_text: str | None
    has_options: bool
    pushdown: bool
    used: tuple[int, ...]  # positions of the relation's columns the plan can use
    read_columns: str | None  # the scan's read_columns option


class _Recursive(Exception):
    """The plan has a recursive CTE: scan counts are unbounded, so nothing is pushed."""


def sql_with_pushdown(spark: SparkSession, statement: str) -> DataFrame:
    """``spark.sql(statement)``, with filter pushdown on for the relations the query scans once."""
    frame = spark.sql(statement)
    jvm = getattr(spark, "_jvm", None)
    if jvm is None:
        return frame
    analyzed = frame._jdf.queryExecution().analyzed()
    command = java_class(jvm, "java.lang.Class").forName(_COMMAND_CLASS)
    if _is_command(command, frame._jdf.logicalPlan()) or _is_command(command, analyzed):
        return frame  # a command ran when it was analysed: running it again would repeat it
    try:
        scans = _scans(jvm, analyzed)
    except _Recursive:
        return frame
    exclusive = _exclusive_scans(scans, statement)
    if not exclusive:
        return frame
    rewritten = _insert_options(statement, exclusive)
    candidate = spark.sql(rewritten)
    try:
        checked = _scans(jvm, candidate._jdf.queryExecution().analyzed())
    except _Recursive:
        return frame
    return candidate if _pushdown_is_exclusive(checked, len(exclusive)) else frame


def _is_command(command: Any, plan: Any) -> bool:
    """`plan` is a command (`command`: Spark's `Command` class) or the result of one already run."""
    if plan.getClass().getSimpleName() == "CommandResult":
        return True
    return bool(command.isInstance(plan))


def _exclusive_scans(scans: list[_Scan], statement: str) -> list[_Scan]:
    """The scans of references in `statement` whose relation no other scan shares."""
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
        spans.append(scan)
    return spans


def _pushdown_is_exclusive(scans: list[_Scan], expected: int) -> bool:
    """Every relation with pushdown on is scanned once, there are as many as were marked, and each
    reads at least the columns the rewritten plan can use."""
    per_table: dict[int, int] = defaultdict(int)
    for scan in scans:
        per_table[scan.table] += scan.times
    pushed = [scan for scan in scans if scan.pushdown]
    return len(pushed) == expected and all(
        per_table[s.table] == 1 and s.times == 1 and _reads_what_is_used(s) for s in pushed
    )


def _reads_what_is_used(scan: _Scan) -> bool:
    if scan.read_columns is None:
        return True
    try:
        read = {int(position) for position in scan.read_columns.split(",")}
    except ValueError:
        return False
    return set(scan.used) <= read


def _clause(scan: _Scan) -> str:
    """The options clause for an exclusive scan: filter pushdown, and the columns it reads when the
    plan uses fewer than all (at least one, so a scan for ``count(*)`` still returns its rows)."""
    options = [f"'{OPTION}' = 'true'"]
    if len(scan.used) < scan.width:
        positions = scan.used or (0,)
        options.append(f"'{READ_COLUMNS}' = '{','.join(str(p) for p in positions)}'")
    return f" WITH ({', '.join(options)})"


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


def _insert_options(statement: str, scans: list[_Scan]) -> str:
    """`statement` with each scan's options clause after its name, last name first."""
    for scan in sorted(scans, key=lambda scan: scan.stop or 0, reverse=True):
        assert scan.stop is not None  # _exclusive_scans keeps only scans with a span
        statement = statement[: scan.stop + 1] + _clause(scan) + statement[scan.stop + 1 :]
    return statement


def _scans(jvm: Any, root: Any) -> list[_Scan]:
    """Every ``lance`` relation of an analysed plan with the number of times the query scans it and
    the columns of it the plan can use."""
    walk = _Walk(jvm)
    walk.visit(root, None)
    walk.use_all(root)  # what the query returns
    times = walk.cte_times()
    return [
        _Scan(
            table=found.table,
            times=1 if found.cte is None else times[found.cte],
            start=found.start,
            stop=found.stop,
            sql_text=found.sql_text,
            has_options=found.has_options,
            pushdown=found.pushdown,
            width=len(found.column_ids),
            used=tuple(i for i, column in enumerate(found.column_ids) if column in walk.used),
            read_columns=found.read_columns,
        )
        for found in walk.relations
    ]


@dataclass(frozen=True)
class _Relation:
    """A ``lance`` relation as the walk found it."""

    cte: int | None  # the CTE definition it is in (None: the main query or a subquery)
    table: int
    start: int | None
    stop: int | None
    sql_text: str | None
    has_options: bool
    pushdown: bool
    column_ids: tuple[int, ...]  # expression ids of its columns, in schema order
    read_columns: str | None


class _Walk:
    """Collects relations and CTE references of a plan, remembering which CTE definition each is in,
    and the expression ids of every column the plan can use."""

    def __init__(self, jvm: Any) -> None:
        self.jvm = jvm
        self.relations: list[_Relation] = []
        # CTE id -> the CTE definitions (None: the main query) that reference it, once per reference
        self.references: dict[int, list[int | None]] = defaultdict(list)
        self.used: set[int] = set()

    def visit(self, node: Any, cte: int | None) -> None:
        # Every line here is a py4j round trip per plan node (~0.1 ms each): the walk asks for a
        # node's kind, references, children and subqueries once each.
        kind = node.nodeName()
        if kind in _RECURSIVE:
            raise _Recursive
        self._use(node.references())
        children = seq_elements(node.children())
        if kind not in _EXPLICIT:
            for child in children:
                self.use_all(child)
        if kind == "CTERelationRef":
            self.references[int(node.cteId())].append(cte)
            return
        if kind == "CTERelationDef":
            cte = int(node.id())
        elif kind == "DataSourceV2Relation":
            self._relation(node, cte)
        for child in children:
            self.visit(child, cte)
        for plan in seq_elements(node.innerChildren()):
            self.use_all(plan)  # a subquery's result is used by the expression that holds it
            self.visit(plan, cte)

    def use_all(self, plan: Any) -> None:
        """Count every column ``plan`` outputs as used."""
        self._use(plan.output())

    def _use(self, attributes: Any) -> None:
        # Spark prints an attribute as name#id (a name containing "#<digits>" only adds ids: more
        # columns read, never fewer).
        self.used.update(int(found) for found in _EXPRESSION_ID.findall(str(attributes)))

    def _relation(self, node: Any, cte: int | None) -> None:
        table = node.table()
        if table.getClass().getSimpleName() != "PythonTable":
            return
        if not str(table.name()).startswith(_SOURCE_PREFIX):
            return
        origin = node.origin()
        options = node.options()
        self.relations.append(
            _Relation(
                cte=cte,
                table=int(java_class(self.jvm, "java.lang.System").identityHashCode(table)),
                start=_option(origin.startIndex()),
                stop=_option(origin.stopIndex()),
                sql_text=_option(origin.sqlText()),
                has_options=not options.isEmpty(),
                pushdown=yes_or_no(str(options.getOrDefault(OPTION, "false"))) is True,
                column_ids=_column_ids(node.output()),
                read_columns=_text(options.getOrDefault(READ_COLUMNS, None)),
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

        ids = {found.cte for found in self.relations if found.cte is not None} | set(self.references)
        return {cte: times(cte, frozenset()) for cte in ids}


def _option(value: Any) -> Any:
    """A Scala ``Option`` as the value or None."""
    return value.get() if value.isDefined() else None


def _column_ids(output: Any) -> tuple[int, ...]:
    """Expression ids of a relation's columns, in order. Spark prints a column as ``name#id``, so
    the printed list holds them all, in one JVM round trip, when it yields exactly one id per column
    (no name holds ``#<digits>``); otherwise each column is asked (three round trips a column)."""
    width = int(output.size())
    printed = _EXPRESSION_ID.findall(str(output))
    if len(printed) == width:
        return tuple(int(found) for found in printed)
    return tuple(int(output.apply(i).exprId().id()) for i in range(width))


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
