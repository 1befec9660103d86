"""Refuse a query that reads one table with two different `WITH (...)` option sets.

Spark's analyser resolves every reference to one table in a query to one relation, and its relation
cache ignores the options a reference carries (`t WITH ('version' = '1')`): each reference then reads
with the options of the first. `select id from t with ('version'='1') union all select id from t`
read version 1 twice and returned wrong rows without any error. The parsed (unresolved) plan still
holds each reference's own options, so such a query is refused before it is analysed. Views the
query names are expanded (their SQL parsed the same way), since a view over the table shares the
relation too.
"""

from __future__ import annotations

import re
from typing import Any

from pyspark.sql import SparkSession

from dbt.adapters.lancens.spark.java_classes import java_class, seq_elements

# `name WITH (` (options), not `WITH name AS (` (a CTE): only then is the parsed plan walked
_WITH_OPTIONS = re.compile(r"\bwith\s*\(", re.IGNORECASE)
_SESSION_CATALOG = "spark_catalog"
_MAX_VIEW_DEPTH = 32  # views over views; a deeper chain is Spark's own error to report


class DifferingOptionsError(ValueError):
    """One query reads one table with two different `WITH (...)` option sets."""


def refuse_differing_options(spark: SparkSession, statement: str) -> None:
    """Raise DifferingOptionsError when `statement` reads one table with two option sets.

    A one-part name is the current database's table (unless a CTE of the query has that name), a
    three-part name in the session catalog the same table as its two-part name. Without a JVM
    gateway (Spark Connect) there is no parser to ask, and nothing is checked."""
    session = getattr(spark, "_jsparkSession", None)
    if session is None or not _WITH_OPTIONS.search(statement):
        return
    walk = _Walk(spark._jvm, session)
    walk.statement(statement, str(session.catalog().currentDatabase()).lower(), depth=0)
    seen: dict[tuple[str, ...], dict[str, str]] = {}
    for name, options in walk.references:
        first = seen.setdefault(name, options)
        if first != options:
            raise DifferingOptionsError(
                f"the query reads {'.'.join(name)} with two different option sets ({_show(first)} and "
                f"{_show(options)}); Spark would read both with the first. Read each version through a "
                "relation of its own (the at_version macro), or one version per query"
            )


class _Walk:
    """The table references of a statement and of the views it reads: (database, table), options."""

    def __init__(self, jvm: Any, session: Any) -> None:
        self.jvm = jvm
        self.session = session
        self.references: list[tuple[tuple[str, ...], dict[str, str]]] = []

    def statement(self, sql: str, database: str, depth: int) -> None:
        """Collect the references of `sql`, whose one-part names are tables of `database`."""
        plan = self.session.sessionState().sqlParser().parsePlan(sql)
        ctes: set[str] = set()
        pending = [plan]
        nodes = []
        while pending:  # children, then subqueries and CTE definitions (inner children)
            node = pending.pop()
            nodes.append(node)
            if node.nodeName() == "UnresolvedWith":
                ctes.update(str(pair._1()).lower() for pair in seq_elements(node.cteRelations()))
            pending.extend(seq_elements(node.children()))
            pending.extend(seq_elements(node.innerChildren()))
        for node in nodes:
            if node.nodeName() != "UnresolvedRelation":
                continue
            parts = [str(part).lower() for part in seq_elements(node.multipartIdentifier())]
            if len(parts) == 1 and parts[0] in ctes:
                continue  # a CTE of the query, not a table
            name = _qualified(parts, database)
            options = node.options().asCaseSensitiveMap()
            self.references.append(
                (name, {str(k).lower(): str(options.get(k)) for k in options.keySet().toArray()})
            )
            view = self._view(name) if depth < _MAX_VIEW_DEPTH else None
            if view is not None:
                self.statement(*view, depth=depth + 1)

    def _view(self, name: tuple[str, ...]) -> tuple[str, str] | None:
        """The SQL of a view of the session catalog named `name` and the database its one-part names
        mean (the current one when it was created); None for a table, or a name Spark does not know."""
        if len(name) != 2:
            return None
        catalog = self.session.sessionState().catalog()
        try:
            if not catalog.tableExists(_identifier(self.jvm, name)):
                return None
            metadata = catalog.getTableMetadata(_identifier(self.jvm, name))
        except Exception:  # a database Spark does not know: no view to expand
            return None
        if str(metadata.tableType().name()) != "VIEW":
            return None
        text = metadata.viewText()
        if not text.isDefined():
            return None
        namespace = seq_elements(metadata.viewCatalogAndNamespace())
        return str(text.get()), str(namespace[-1]).lower() if len(namespace) > 1 else name[0]


def _qualified(parts: list[str], database: str) -> tuple[str, ...]:
    """A table name as (database, table) where it names the session catalog's table."""
    if len(parts) == 1:
        return (database, parts[0])
    if len(parts) == 3 and parts[0] == _SESSION_CATALOG:
        return tuple(parts[1:])
    return tuple(parts)


def _identifier(jvm: Any, name: tuple[str, ...]) -> Any:
    """Spark's `TableIdentifier` of a two-part name."""
    database = java_class(jvm, "scala.Option").apply(name[0])
    return java_class(jvm, "org.apache.spark.sql.catalyst.TableIdentifier").apply(name[1], database)


def _show(options: dict[str, str]) -> str:
    return "(" + ", ".join(f"'{k}' = '{v}'" for k, v in sorted(options.items())) + ")" if options else "none"
