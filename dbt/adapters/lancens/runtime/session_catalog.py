"""Spark's session catalog as a mirror of the namespace, so SQL can name tables and views.

The namespace is the catalog of record; Spark's catalog is in memory and per process, a cache the
runtime fills lazily (a relation when a query first needs it) and refreshes after each write.

With the JVM connector chosen (`jvm_reads`, docs/jvm-connector.md), a table lance-core can read is
created `USING` the connector's class instead, with the same options as below; a Spark `INSERT INTO`
it is handed by the connector to the Python source, so it lands through the same hook. A table
lance-core cannot read (`jvm_connector.unreadable`) keeps the Python source, logged.

Otherwise tables are created `USING` a bound `lance` source (`spark.datasource.register_bound_source`:
Spark 4.3 passes no options to Python data sources for catalog tables), which carries the location,
the namespace's storage options, an optional version, and the commit hook that routes a Spark
`INSERT` into the table through the engine (`runtime.hook`). Views are Spark views of the
engine's SQL. Every statement goes through the runtime's one `sql` entry.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pyarrow as pa
from dbt.adapters.events.logging import AdapterLogger
from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession

from dbt.adapters.lancens.definitions.names import database_name, qualified_name
from dbt.adapters.lancens.definitions.sql_text import spark_string
from dbt.adapters.lancens.spark import jvm_connector
from dbt.adapters.lancens.spark.datasource import register_bound_source
from dbt.adapters.lancens.spark.options import read_options
from dbt.adapters.lancens.spark.types import to_spark_schema
from dbt.adapters.lancens.text.quoting import quote

logger = AdapterLogger("lancens")


@dataclass(frozen=True)
class _Registration:
    """What a table's catalog entry reads: its location, a pinned version, the Lance schema, and
    whether through the JVM connector."""

    location: str
    version: int | None
    schema: pa.Schema
    jvm: bool = False


class SessionCatalog:
    """Creates and drops databases, tables and views in one SparkSession's catalog.

    `reuse`: keep a table's entry when a refresh would create the same one again. The bound source
    resolves the latest version when a query is planned, so after a write that kept the table's
    location and schema the entry already reads the new rows; re-creating it costs a DROP, a
    CREATE and a Python worker that infers the schema (profile line P12 in docs/benchmarks.md:
    a fifth of a small model's build). Off for a Spark Connect server, whose catalog other
    sessions change behind this one's back."""

    def __init__(
        self,
        spark: SparkSession,
        sql: Callable[[str], DataFrame],
        storage_options: dict[str, str],
        commit_hook: str,
        commit_hook_args: Callable[[Sequence[str]], dict[str, object]],
        reuse: bool = True,
        jvm_reads: bool = False,
    ) -> None:
        self._spark = spark
        self._sql = sql
        self._storage_options = storage_options
        self._commit_hook = commit_hook
        self._commit_hook_args = commit_hook_args
        self._reuse = reuse
        self._jvm_reads = jvm_reads
        self._tables: dict[tuple[str, ...], _Registration] = {}

    def ensure_database(self, namespace_id: Sequence[str]) -> None:
        self._sql(f"CREATE DATABASE IF NOT EXISTS {quote(database_name(namespace_id))}")

    def drop_database(self, namespace_id: Sequence[str]) -> None:
        prefix = tuple(namespace_id)
        for key in [key for key in self._tables if key[: len(prefix)] == prefix]:
            del self._tables[key]
        self._sql(f"DROP DATABASE IF EXISTS {quote(database_name(namespace_id))} CASCADE")

    def register_table(
        self,
        table_id: Sequence[str],
        location: str,
        version: int | None = None,
        schema: pa.Schema | None = None,
        committed: tuple[int, int] | None = None,
    ) -> bool:
        """(Re)create the table reading `location` (at `version`, else the latest); False when the
        location holds no Lance table yet. Only a table read at its latest version takes INSERTs
        through the engine: a pinned version is a staged one, which the run publishes itself.
        `committed`: (base, new) when the latest is this process's own commit on `base`
        (`jvm_connector.own_commit`), which makes lance-core's check a listing, not an open.

        `schema`: the table's Lance schema; an entry this catalog made for the same location,
        version and schema, still in Spark's catalog, is kept (see `reuse`). Its cached rows, if a
        `CACHE TABLE` (a hook, say) cached it, are refreshed: Spark would keep serving them."""
        key = tuple(table_id)
        jvm = self._jvm_reads and self._jvm_can_read(table_id, location, version, committed)
        registration = _Registration(location, version, schema, jvm) if schema is not None else None
        if registration is not None and self._reuse and self._tables.get(key) == registration:
            name = qualified_name(table_id)
            if self._spark.catalog.tableExists(name):
                if self._cached(name):
                    self._spark.catalog.refreshTable(name)  # cached again, lazily, from the new version
                return True
        options = read_options(location, self._storage_options, version)
        if version is None:
            options["commit_hook"] = self._commit_hook
            options["commit_hook_args"] = json.dumps(self._commit_hook_args(table_id), sort_keys=True)
        if jvm:
            return self._create(table_id, jvm_connector.SOURCE_CLASS, schema, options, registration)
        return self._create(table_id, register_bound_source(self._spark, options), schema, {}, registration)

    def _jvm_can_read(
        self,
        table_id: Sequence[str],
        location: str,
        version: int | None,
        committed: tuple[int, int] | None = None,
    ) -> bool:
        """Whether lance-core reads the table at `version`, asked before every registration: a
        write since the last one may have set a reader flag lance-core does not know."""
        reason = jvm_connector.unreadable(self._spark, location, version, self._storage_options, committed)
        if reason is not None:
            logger.info(
                f"dbt-lancens: {qualified_name(table_id)} is read through the Python data source: "
                f"the JVM connector's lance-core cannot read it ({reason})"
            )
        return reason is None

    def _create(
        self,
        table_id: Sequence[str],
        source: str,
        schema: pa.Schema | None,
        options: dict[str, str],
        registration: _Registration | None,
    ) -> bool:
        """Create the table's entry reading through `source` with `options`."""
        key = tuple(table_id)
        self.ensure_database(table_id[:-1])
        self.forget(table_id)
        try:
            if schema is not None:
                # The schema the data source would report for it (`LanceDataSource.schema`), given
                # here: Spark then starts no planner worker to open the table for it (a LIST and a
                # GET on S3). Reads still open the latest version when they are planned.
                self._spark.catalog.createTable(
                    qualified_name(table_id), source=source, schema=to_spark_schema(schema), **options
                )
            else:
                self._sql(f"CREATE TABLE {qualified_name(table_id)} USING {source}{_options_clause(options)}")
        except AnalysisException as exc:
            if "not found" in str(exc).lower():
                return False
            raise
        if registration is not None:
            self._tables[key] = registration
        return True

    def _cached(self, name: str) -> bool:
        """Whether Spark caches the table's rows. `isCached` analyses the table (~15 ms, on every
        commit's refresh); the cache manager says first, in one call, whether anything is cached."""
        session = getattr(self._spark, "_jsparkSession", None)
        if session is not None and session.sharedState().cacheManager().isEmpty():
            return False
        return bool(self._spark.catalog.isCached(name))

    def register_view(self, view_id: Sequence[str], view_sql: str) -> None:
        """(Re)create an engine view; relations its SQL reads are registered by the runtime's `sql`."""
        self.ensure_database(view_id[:-1])
        self._tables.pop(tuple(view_id), None)
        self._sql(f"CREATE OR REPLACE VIEW {qualified_name(view_id)} AS {view_sql}")

    def use_jvm_reads(self, jvm_reads: bool) -> None:
        """Register tables through the JVM connector from now on, or through the Python source; the
        entries made the other way are dropped, so each is registered again as it is next read."""
        if jvm_reads != self._jvm_reads:
            self._jvm_reads = jvm_reads
            self.forget_tables()

    def forget_tables(self) -> None:
        """Remove every table from Spark's catalog (a branch target's change: they read elsewhere).
        Spark's listing, not this mirror's: an entry pinned to a version is not kept in the mirror."""
        self._tables.clear()
        catalog = self._spark.catalog
        for database in catalog.listDatabases():
            for table in catalog.listTables(database.name):
                if table.tableType != "VIEW" and not table.isTemporary:
                    self._sql(f"DROP TABLE {quote(database.name)}.{quote(table.name)}")

    def forget(self, object_id: Sequence[str]) -> None:
        """Remove a table or view from Spark's catalog (its Lance data is untouched)."""
        self._tables.pop(tuple(object_id), None)
        name = qualified_name(object_id)
        catalog = self._spark.catalog
        if not catalog.databaseExists(database_name(object_id[:-1])) or not catalog.tableExists(name):
            return
        kind = "VIEW" if catalog.getTable(name).tableType == "VIEW" else "TABLE"
        self._sql(f"DROP {kind} {name}")


def _options_clause(options: dict[str, str]) -> str:
    """` OPTIONS (...)` for `options` (none: empty), values as Spark string literals."""
    if not options:
        return ""
    pairs = ", ".join(f"{quote(key)} {spark_string(value)}" for key, value in options.items())
    return f" OPTIONS ({pairs})"
