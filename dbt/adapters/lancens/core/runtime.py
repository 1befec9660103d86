"""One Spark session and one namespace engine per process, shared by every dbt thread.

Spark's session catalog is in memory, so it only knows what this process told it. Tables and views
are made known lazily: when Spark reports a missing table or database, the runtime looks it up in
the namespace and registers it, then the statement is retried. A model therefore costs one catalog
entry per relation it reads, never a listing of the whole root.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dbt.adapters.events.logging import AdapterLogger
from pyspark.logger import PySparkLogger
from pyspark.sql import DataFrame, SparkSession

from dbt.adapters.lancens.core.errors import missing_database, missing_relation, spark_start_error
from dbt.adapters.lancens.namespace import DirectoryNamespace, errors
from dbt.adapters.lancens.spark import catalog, get_or_create_session
from dbt.adapters.lancens.spark.pushdown import sql_with_pushdown
from dbt.adapters.lancens.spark.warmup import warm_up

logger = AdapterLogger("lancens")

# Each retry registers one more relation; a query reading more than this many unknown relations
# is unusual enough to stop rather than loop.
MAX_LAZY_SYNCS = 64


class SparkStartError(RuntimeError):
    """Spark could not start (most often: no Java 17); the message says what to install."""


@dataclass
class LancensRuntime:
    """The process-wide pair of SparkSession and DirectoryNamespace for one profile target.

    Spark starts on first use: commands that only need the namespace (`dbt docs generate` over
    tables, `dbt ls`, `run-operation` on versions) never pay for a JVM.
    """

    namespace: DirectoryNamespace
    master: str = "local[*]"
    spark_config: dict[str, str] = field(default_factory=dict)
    spark_files_dir: str | None = None  # Spark's console output and working files (session.py)
    lock: threading.RLock = field(default_factory=threading.RLock)
    _spark: SparkSession | None = None
    _threads: threading.local = field(default_factory=threading.local)
    _warming: threading.Thread | None = None

    @property
    def spark(self) -> SparkSession:
        if self._spark is None:
            with self.lock:
                if self._spark is None:
                    try:
                        self._spark = get_or_create_session(
                            master=self.master, config=self.spark_config, files_dir=self.spark_files_dir
                        )
                    except Exception as exc:
                        raise SparkStartError(spark_start_error(exc, self.spark_files_dir)) from exc
                    _quiet_query_context_loggers()
        return self._spark

    def start_in_background(self) -> None:
        """Start Spark and warm its Python workers on a daemon thread, once per process.

        Called when the adapter is created for a command that will run Spark, so the JVM launch and
        the workers' imports overlap dbt's own start-up (parsing) instead of the first model. A
        failure is left for the first real use of `spark` to raise, with its own message."""
        with self.lock:
            if self._warming is not None:
                return
            self._warming = threading.Thread(
                target=self._start_and_warm, name="lancens-spark-start", daemon=True
            )
        self._warming.start()

    def _start_and_warm(self) -> None:
        try:
            self.activate()  # starts Spark; a new thread has no active session for the lance source
            warm_up(self.spark)
        except Exception:  # the foreground's first use of `spark` reports what went wrong
            logger.debug("background Spark start failed", exc_info=True)

    def activate(self) -> None:
        """Make this session the JVM's active one for the calling thread, with its job description.

        dbt runs models on several threads; Spark resolves Python data sources (`lance`) through
        the thread's active session, which a new JVM thread does not have. Job descriptions are
        Spark local properties, per thread as well.
        """
        jvm_session_class = self.spark._jvm.org.apache.spark.sql.SparkSession  # type: ignore[union-attr]
        jvm_session_class.setActiveSession(self.spark._jsparkSession)
        self.spark.sparkContext.setJobDescription(getattr(self._threads, "job_description", None))

    def describe_jobs(self, description: str | None) -> None:
        """What the Spark UI shows for the jobs the calling thread starts from now on (dbt passes the
        node's query comment). Applied by `activate`, so setting it never starts Spark."""
        self._threads.job_description = description

    def sql(self, statement: str, pushdown: bool = False) -> DataFrame:
        """Run Spark SQL, registering namespace tables and views it needs but Spark does not know yet.

        `pushdown`: push filters into Lance for the tables the query scans once (spark/pushdown.py).
        Only for a frame the caller executes once: a later query on the same frame with other filters
        would reuse the relation's planned reader (PySpark 4.3)."""
        if pushdown:
            return self._resolving(lambda: sql_with_pushdown(self.spark, statement))
        return self._resolving(lambda: self.spark.sql(statement))

    def frame_of_plan(self, logical_plan: Any) -> DataFrame:
        """The DataFrame of a parsed (unresolved) JVM logical plan, e.g. the query of a parsed CTAS."""
        dataset = self.spark._jvm.org.apache.spark.sql.classic.Dataset  # type: ignore[union-attr]
        return self._resolving(
            lambda: DataFrame(dataset.ofRows(self.spark._jsparkSession, logical_plan), self.spark)
        )

    def _resolving(self, analyse: Callable[[], DataFrame]) -> DataFrame:
        """Call `analyse`, registering each missing relation it reports and trying again."""
        self.activate()
        for _ in range(MAX_LAZY_SYNCS):
            try:
                return analyse()
            except Exception as exc:
                if not self.sync_missing(exc):
                    raise
        return analyse()

    def sync_missing(self, exc: BaseException) -> bool:
        """Register what `exc` says is missing, if the namespace has it. True when something was added."""
        relation = missing_relation(exc)
        if relation is not None:
            database, name = relation  # as the SQL spelled them; namespace ids are lower case
            return self.sync_relation(catalog.namespace_id(database), name.lower())
        database = missing_database(exc)
        if database is not None:
            namespace_id = catalog.namespace_id(database)
            if self.namespace.namespace_exists(namespace_id):
                self.spark.sql(f"CREATE DATABASE IF NOT EXISTS `{database}`")
                return True
        return False

    def sync_relation(self, namespace_id: list[str], name: str) -> bool:
        """Register one table or view of the namespace in Spark's catalog."""
        object_id = [*namespace_id, name]
        with self.lock:
            try:
                view = self.namespace.describe_view(object_id)
            except errors.NamespaceError:
                if not self.namespace.table_exists(object_id):
                    return False
                catalog.sync_table(self.spark, self.namespace, object_id)
                return True
        # A view's SQL may itself read relations Spark does not know yet: `sql` registers them.
        database = catalog.database_name(namespace_id)
        self.spark.sql(f"CREATE DATABASE IF NOT EXISTS `{database}`")
        self.sql(f"CREATE OR REPLACE VIEW `{database}`.`{name}` AS {view.sql}")
        return True


def _quiet_query_context_loggers() -> None:
    """Stop PySpark printing every captured SQL error, Java stack trace included, to stderr.

    The runtime catches "table not found" to register tables lazily, and real errors reach the dbt
    user through the adapter's exception handler with Spark's message and no Java frames.
    """
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).disabled = True


_RUNTIMES: dict[tuple[tuple[str, str], ...], LancensRuntime] = {}
_RUNTIMES_LOCK = threading.Lock()


def get_runtime(
    namespace_properties: dict[str, str],
    master: str,
    spark_config: dict[str, str],
    spark_files_dir: str | None = None,
) -> LancensRuntime:
    """The runtime for these settings, created once per process (a JVM hosts one SparkContext)."""
    key = tuple(sorted(namespace_properties.items()))
    with _RUNTIMES_LOCK:
        runtime = _RUNTIMES.get(key)
        if runtime is None:
            runtime = LancensRuntime(
                namespace=DirectoryNamespace.from_properties(namespace_properties),
                master=master,
                spark_config=dict(spark_config),
                spark_files_dir=spark_files_dir,
            )
            _RUNTIMES[key] = runtime
        return runtime
