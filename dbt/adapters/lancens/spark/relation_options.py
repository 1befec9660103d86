"""Refuse a query that reads one table with two different `WITH (...)` option sets.

Spark's analyser resolves every reference to one table in a query to one relation, and its relation
cache ignores the options a reference carries (`t WITH ('version' = '1')`): each reference then reads
with the options of the first. `select id from t with ('version'='1') union all select id from t`
read version 1 twice and returned wrong rows without any error. The parsed (unresolved) plan still
holds each reference's own options, so such a query is refused before it is analysed.
"""

from __future__ import annotations

import re
from typing import Any

from pyspark.sql import SparkSession

# `name WITH (` (options), not `WITH name AS (` (a CTE): only then is the parsed plan walked
_WITH_OPTIONS = re.compile(r"\bwith\s*\(", re.IGNORECASE)


class DifferingOptionsError(ValueError):
    """One query reads one table with two different `WITH (...)` option sets."""


def refuse_differing_options(spark: SparkSession, statement: str) -> None:
    """Raise DifferingOptionsError when `statement` names one table with two option sets.

    Names are compared as written, a one-part name qualified with the session's current database.
    Without a JVM gateway (Spark Connect) there is no parser to ask, and nothing is checked."""
    session = getattr(spark, "_jsparkSession", None)
    if session is None or not _WITH_OPTIONS.search(statement):
        return
    database = str(session.catalog().currentDatabase()).lower()
    seen: dict[tuple[str, ...], dict[str, str]] = {}
    for name, options in _references(session.sessionState().sqlParser().parsePlan(statement)):
        key = (database, *name) if len(name) == 1 else name
        first = seen.setdefault(key, options)
        if first != options:
            raise DifferingOptionsError(
                f"the query reads {'.'.join(name)} with two different option sets ({_show(first)} and "
                f"{_show(options)}); Spark would read both with the first. Read each version through a "
                "relation of its own (the at_version macro), or one version per query"
            )


def _references(plan: Any) -> list[tuple[tuple[str, ...], dict[str, str]]]:
    """Every table reference in a parsed plan, its subqueries and CTE definitions: (name, options)."""
    found = []
    pending = [plan]
    while pending:
        node = pending.pop()
        if node.nodeName() == "UnresolvedRelation":
            name = tuple(str(part).lower() for part in _elements(node.multipartIdentifier()))
            options = node.options().asCaseSensitiveMap()
            found.append((name, {str(k).lower(): str(options.get(k)) for k in options.keySet().toArray()}))
        pending.extend(_elements(node.children()))
        pending.extend(_elements(node.innerChildren()))  # subqueries, CTE definitions
    return found


def _elements(sequence: Any) -> list[Any]:
    return [sequence.apply(i) for i in range(int(sequence.size()))]


def _show(options: dict[str, str]) -> str:
    return "(" + ", ".join(f"'{k}' = '{v}'" for k, v in sorted(options.items())) + ")" if options else "none"
