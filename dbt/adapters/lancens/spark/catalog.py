"""Mirror a Lance directory namespace into Spark's (in-memory, per-session) catalog.

The namespace is the catalog of record; Spark's catalog is a cache that lets SQL name tables.

Database names: the levels of a namespace id joined by ``__`` (``["sales", "eu"]`` <->
``sales__eu``); the root namespace ``[]`` is Spark's ``default`` database. To keep this reversible a
level must not start or end with ``_``, have upper-case letters (Spark lower-cases database names),
nor be ``default`` at the top; a run of two or more underscores inside a level gets one more
(``["a_dbt_test__audit"]`` <-> ``a_dbt_test___audit``), so exactly two always separate levels.

Tables are created ``USING`` a bound ``lance`` source (see ``datasource.bound_source``: Spark 4.3
passes no options to Python sources for catalog tables), which carries the location, the
namespace's storage options and a commit hook routing ``INSERT`` through ``ns.commit_table``.
Engine views become Spark views with the engine's SQL.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession

from dbt.adapters.lancens.spark.datasource import register_bound_source

if TYPE_CHECKING:
    from dbt.adapters.lancens.namespace import DirectoryNamespace

SEPARATOR = "__"
ROOT_DATABASE = "default"
COMMIT_HOOK = "dbt.adapters.lancens.spark.catalog:namespace_commit"


# Inside a level, a run of n >= 2 underscores is written with n + 1: a run of exactly two is a separator.
_LEVEL_RUN = re.compile(r"_{2,}")
_ESCAPED_RUN = re.compile(r"_{3,}")
_SEPARATOR_RUN = re.compile(r"(?<!_)__(?!_)")


def _check_level(level: str, position: int) -> None:
    problem = None
    if not level:
        problem = "is empty"
    elif level.startswith("_") or level.endswith("_"):
        problem = "starts or ends with '_', which would make the joined name ambiguous"
    elif level != level.lower():
        problem = "has upper-case letters; Spark lower-cases database names"
    elif position == 0 and level == ROOT_DATABASE:
        problem = f"is {ROOT_DATABASE!r}, the database of the root namespace"
    if problem:
        raise ValueError(f"namespace level {level!r} {problem}")


def database_name(namespace_id: Sequence[str]) -> str:
    """The Spark database of a namespace (levels joined by ``__``; the root is ``default``)."""
    for position, level in enumerate(namespace_id):
        _check_level(level, position)
    escaped = (_LEVEL_RUN.sub(lambda run: run.group() + "_", level) for level in namespace_id)
    return SEPARATOR.join(escaped) if namespace_id else ROOT_DATABASE


def namespace_id(database: str) -> list[str]:
    """The namespace a Spark database mirrors; inverse of ``database_name``. Spark database names
    are case-insensitive, so ``Sales__EU`` is ``["sales", "eu"]``."""
    database = database.lower()
    if database == ROOT_DATABASE:
        return []
    levels = [_ESCAPED_RUN.sub(lambda run: run.group()[1:], part) for part in _SEPARATOR_RUN.split(database)]
    for position, level in enumerate(levels):
        _check_level(level, position)
    return levels


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def qualified_name(object_id: Sequence[str]) -> str:
    """``database.table`` (quoted) of a table or view id."""
    return f"{_quote(database_name(object_id[:-1]))}.{_quote(object_id[-1])}"


def namespace_commit(
    uri: str, operation: Any, read_version: int | None, storage_options: dict, args: dict
) -> int:
    """Commit hook for writes to synced tables: goes through the namespace engine's commit_table."""
    from dbt.adapters.lancens.namespace import DirectoryNamespace

    namespace = DirectoryNamespace.from_properties(args["properties"])
    return namespace.commit_table(args["table_id"], operation, read_version)


def _drop(spark: SparkSession, object_id: Sequence[str]) -> None:
    name = qualified_name(object_id)
    if not spark.catalog.databaseExists(database_name(object_id[:-1])):
        return
    if not spark.catalog.tableExists(name):
        return
    kind = spark.catalog.getTable(name).tableType
    spark.sql(f"DROP {'VIEW' if kind == 'VIEW' else 'TABLE'} {name}")


def _ensure_database(spark: SparkSession, namespace: Sequence[str]) -> None:
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {_quote(database_name(namespace))}")


def _create_table(spark: SparkSession, ns: DirectoryNamespace, table_id: list[str], location: str) -> bool:
    """(Re)create one table; False when its location holds no Lance table yet (declared only)."""
    source = register_bound_source(
        spark,
        {
            "path": location,
            "storage_options": json.dumps(ns.storage_options, sort_keys=True),
            "commit_hook": COMMIT_HOOK,
            "commit_hook_args": json.dumps(
                {"properties": ns.properties, "table_id": table_id}, sort_keys=True
            ),
        },
    )
    _ensure_database(spark, table_id[:-1])
    _drop(spark, table_id)
    try:
        spark.sql(f"CREATE TABLE {qualified_name(table_id)} USING {source}")
    except AnalysisException as exc:
        if "not found" in str(exc).lower():
            return False
        raise
    return True


def sync_table(spark: SparkSession, ns: DirectoryNamespace, table_id: Sequence[str]) -> bool:
    """Mirror one table (reads only that table's entry); returns False if it has no data yet."""
    info = ns.describe_table(list(table_id))
    if info.declared_only:
        _drop(spark, table_id)
        return False
    return _create_table(spark, ns, list(table_id), info.location)


def sync_view(spark: SparkSession, ns: DirectoryNamespace, view_id: Sequence[str]) -> None:
    """Mirror one engine view as a Spark view with the engine's SQL."""
    view = ns.describe_view(list(view_id))
    _ensure_database(spark, view_id[:-1])
    _drop(spark, view_id)
    spark.sql(f"CREATE VIEW {qualified_name(view_id)} AS {view.sql}")


def sync_namespace(spark: SparkSession, ns: DirectoryNamespace, namespace_id: Sequence[str]) -> None:
    """Mirror one namespace: its database, its tables and its views (not child namespaces)."""
    # Imported here, like lance elsewhere in this package: Spark's daemon must not load Lance.
    from dbt.adapters.lancens.namespace import all_pages

    namespace = list(namespace_id)
    _ensure_database(spark, namespace)
    for name in all_pages(ns.list_tables, namespace):
        sync_table(spark, ns, [*namespace, name])
    if ns.manifest_enabled:
        for name in all_pages(ns.list_views, namespace):
            sync_view(spark, ns, [*namespace, name])


def sync_all(spark: SparkSession, ns: DirectoryNamespace) -> None:
    """Mirror everything in one pass over the namespace's object listing (one manifest read)."""
    _ensure_database(spark, [])
    entries = ns.list_objects()
    for entry in entries:
        if entry.object_type == "namespace":
            _ensure_database(spark, entry.id)
    for entry in entries:
        if entry.object_type == "table" and entry.location:
            _create_table(spark, ns, list(entry.id), entry.location)
    for entry in entries:
        if entry.object_type == "view":
            sync_view(spark, ns, entry.id)


def forget_table(spark: SparkSession, table_id: Sequence[str]) -> None:
    """Remove a table or view from Spark's catalog (its Lance data is untouched)."""
    _drop(spark, table_id)
