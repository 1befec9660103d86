"""One Spark session and one namespace engine per process, shared by every dbt thread.

The runtime owns the process's state: the engine, the Spark session (started on first use), the
mirror of the namespace in Spark's session catalog, the atomic-publish run in progress, and what
was already checked about the root. Everything else receives what it needs from it.

Spark's session catalog is in memory, so it only knows what this process told it. Tables and views
are made known lazily: when Spark reports a missing table or database, the runtime looks it up in
the namespace and registers it, then the statement is retried. A model therefore costs one catalog
entry per relation it reads, never a listing of the whole root.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from dbt.adapters.events.logging import AdapterLogger
from pyspark.logger import PySparkLogger
from pyspark.sql import DataFrame, SparkSession

from dbt.adapters.lancens.definitions.names import InvalidNameError, namespace_id
from dbt.adapters.lancens.namespace import DirectoryNamespace, errors
from dbt.adapters.lancens.namespace.versions import TVM_KEY
from dbt.adapters.lancens.runtime import connector_choice, hook, plans
from dbt.adapters.lancens.runtime.branch_landing import BranchLanding
from dbt.adapters.lancens.runtime.connector_choice import ConnectorChoice
from dbt.adapters.lancens.runtime.errors import missing_database, missing_relation
from dbt.adapters.lancens.runtime.fragment_bounds import FragmentBounds
from dbt.adapters.lancens.runtime.landing import DIRECT, Landing
from dbt.adapters.lancens.runtime.session_catalog import SessionCatalog
from dbt.adapters.lancens.runtime.spark_backends import ConnectSpark, LocalSpark, SparkBackend
from dbt.adapters.lancens.runtime.staging import RunPublisher
from dbt.adapters.lancens.spark.jvm_connector import own_commit, with_class_path
from dbt.adapters.lancens.spark.remote import is_remote

if TYPE_CHECKING:
    import lance

logger = AdapterLogger("lancens")

# Each retry registers one more relation; a query reading more than this many unknown relations
# is unusual enough to stop rather than loop.
MAX_LAZY_SYNCS = 64


@dataclass
class LancensRuntime:
    """The process-wide pair of SparkSession and DirectoryNamespace for one profile target.

    Spark starts on first use: commands that only need the namespace (`dbt docs generate` over
    tables, `dbt ls`, `run-operation` on versions) never pay for a JVM.
    """

    namespace: DirectoryNamespace
    # How this process reaches Spark: its own JVM (`master`) or a Spark Connect server.
    backend: SparkBackend
    lock: threading.RLock = field(default_factory=threading.RLock)
    # The atomic-publish run of this process, between its on-run-start and on-run-end hooks
    # (`commits/publish.py` sets and clears it); while it is there, it is the process's `landing`.
    publisher: RunPublisher | None = None
    # A branch target's landing (profile key `branch:`, `build_on_branch`): every write lands on it.
    branch_landing: BranchLanding | None = None
    # Which reader Spark uses for Lance tables: the JVM connector or the Python data source.
    connector: ConnectorChoice = field(default_factory=lambda: connector_choice.plan(None, None))
    # Checked once per process: the root reads as a namespace; table version management is on.
    root_checked: bool = False
    version_management_on: bool = False
    _spark: SparkSession | None = None
    _catalog: SessionCatalog | None = None
    _threads: threading.local = field(default_factory=threading.local)
    _warming: threading.Thread | None = None
    _writers: dict[tuple[str, ...], threading.RLock] = field(default_factory=dict)
    # Column ranges of fragments this process has seen (microbatch deletes scan only those that can match).
    fragment_bounds: FragmentBounds = field(default_factory=FragmentBounds)
    # Per table, the version this process's current write committed (`refresh_table`, `open_write`).
    _committed: dict[tuple[str, ...], lance.LanceDataset] = field(default_factory=dict)
    # Spark Connect only: the local checkpoints this process made (`merge.made_once`), referenced
    # until the session ends. PySpark releases a Connect checkpoint when its Python object is
    # garbage-collected, with a blocking call that can wait forever when it comes mid-run (a snapshot
    # hung so, PySpark 4.3, `CachedRemoteRelation.__del__`); the server drops them with the session.
    _connect_checkpoints: list[DataFrame] = field(default_factory=list)

    _shared: ClassVar[dict[tuple[tuple[tuple[str, str], ...], str | None], LancensRuntime]] = {}
    _shared_lock: ClassVar[threading.Lock] = threading.Lock()

    @classmethod
    def shared(
        cls,
        namespace_properties: dict[str, str],
        master: str,
        spark_config: dict[str, str],
        spark_files_dir: str | None = None,
        remote: str | None = None,
        spark_connector: str | None = None,
        connector_jars_on_nodes: bool = False,
    ) -> LancensRuntime:
        """The runtime for these settings, created once per process (a JVM hosts one SparkContext).
        `spark_connector`: the profile's reader choice (`connector_choice.py`); a JVM choice puts the
        connector's jars on the class path the driver starts with."""
        key = (tuple(sorted(namespace_properties.items())), remote)
        with cls._shared_lock:
            runtime = cls._shared.get(key)
            if runtime is None:
                connector = connector_choice.plan(spark_connector, remote, connector_jars_on_nodes)
                config = with_class_path(spark_config, list(connector.class_path))
                backend: SparkBackend = (
                    LocalSpark(master, config, spark_files_dir)
                    if remote is None
                    else ConnectSpark(remote, dict(spark_config))
                )
                namespace = DirectoryNamespace.from_properties(namespace_properties)
                runtime = cls(namespace, backend, connector=connector)
                cls._shared[key] = runtime
            else:
                runtime.choose_connector(spark_connector, remote, connector_jars_on_nodes)
            return runtime

    def choose_connector(
        self, requested: str | None, remote: str | None, jars_on_nodes: bool = False
    ) -> None:
        """Take the reader a later profile of this process asks for (dbt's in-process runs share
        one runtime per root): decided against the running driver when there is one, and Spark's
        table entries made with the other reader are dropped so each is registered again."""
        choice = connector_choice.plan(requested, remote, jars_on_nodes)
        if choice.requested == self.connector.requested:
            return
        if self._spark is not None:
            choice = connector_choice.confirm(choice, self._spark)
        self.connector = choice
        if self._catalog is not None:
            self._catalog.use_jvm_reads(choice.jvm)

    @property
    def landing(self) -> Landing:
        """How this process's writes land now: staged by the atomic-publish run in progress, else
        committed at once. The one place that tells the two apart; a write takes it when it starts
        (`commits/table_write.open_write`), so it lands as it began even if the run ends meanwhile."""
        publisher = self.publisher
        if publisher is not None:
            return publisher
        return DIRECT if self.branch_landing is None else self.branch_landing

    def build_on_branch(self, name: str | None) -> None:
        """Land every later write on branch `name` of its table (None: on the tables themselves).

        A change of target in one process (dbt's in-process runs) drops Spark's entries of
        the tables: they read the other target's branch, or main."""
        current = self.branch_landing.name if self.branch_landing is not None else None
        if name == current:
            return
        self.branch_landing = None if name is None else BranchLanding(self.namespace, name)
        if self._catalog is not None:
            self._catalog.forget_tables()

    def hold_checkpoint(self, frame: DataFrame) -> None:
        """Keep a Connect session's local checkpoint referenced until the process ends (see
        `_connect_checkpoints`); a local session's are released by py4j, which never blocks."""
        if is_remote(frame.sparkSession):
            self._connect_checkpoints.append(frame)

    @property
    def atomic_run(self) -> bool:
        """Whether an atomic-publish run is in progress: what the adapter reports to dbt and refuses
        on (`adapter/atomic_request.py`), never how a write lands (that is `landing`)."""
        return self.publisher is not None

    @property
    def spark(self) -> SparkSession:
        if self._spark is None:
            with self.lock:
                if self._spark is None:
                    spark = self.backend.start()
                    _quiet_query_context_loggers()
                    # before the session is handed out: `jvm` without the classes fails every use
                    # of it, not only the first (which may be the background start's)
                    self._confirm_connector(spark)
                    self._spark = spark
        return self._spark

    def _confirm_connector(self, spark: SparkSession) -> None:
        """Keep the JVM reader only if the started driver loads it (`connector_choice.confirm`)."""
        confirmed = connector_choice.confirm(self.connector, spark)
        if confirmed != self.connector:
            logger.info(f"dbt-lancens: Spark reads Lance through the Python data source: {confirmed.reason}")
        self.connector = confirmed

    @property
    def catalog(self) -> SessionCatalog:
        """The namespace's mirror in Spark's session catalog."""
        if self._catalog is None:
            with self.lock:
                if self._catalog is None:
                    self._catalog = SessionCatalog(
                        self.spark,
                        self.sql,
                        self.namespace.storage_options,
                        hook.HOOK,
                        lambda table_id: hook.hook_args(self.namespace, list(table_id), {}),
                        reuse=self.backend.reuses_catalog_entries,
                        jvm_reads=self.connector.jvm,
                    )
        return self._catalog

    def sql(self, statement: str, pushdown: bool = False) -> DataFrame:
        """Run Spark SQL: the one entry for every statement the adapter runs.

        Namespace tables and views the statement needs but Spark does not know yet are registered
        and the statement analysed again. `pushdown`: push filters into Lance for the tables the
        query scans once (spark/pushdown.py). Only for a frame the caller executes once: a later
        query on the same frame with other filters would reuse the relation's planned reader
        (PySpark 4.3)."""
        for object_id in self.backend.relations_to_register(statement):
            self.register_relation(object_id[:-1], object_id[-1])
        return self._resolving(lambda: self.backend.analyse(self.spark, statement, pushdown))

    def parse_statement(self, statement: str) -> plans.Statement | None:
        """What `statement` asks for when it is DDL or DML on a namespace object, else None."""
        return self.backend.parse_statement(self.spark, statement)

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
            self.backend.warm(self.spark)
        except Exception as exc:  # the foreground's first use of `spark` reports what went wrong
            logger.debug(f"background Spark start failed: {exc!r}")

    def activate(self) -> None:
        """Make this session the active one for the calling thread, with its job description.

        dbt runs models on several threads; Spark resolves Python data sources (`lance`) through
        the thread's active session, which a new JVM thread does not have. Job descriptions are
        Spark local properties, per thread as well.
        """
        self.backend.activate(self.spark, getattr(self._threads, "job_description", None))

    def describe_jobs(self, description: str | None) -> None:
        """What the Spark UI shows for the jobs the calling thread starts from now on (dbt passes the
        node's query comment). Applied by `activate`, so setting it never starts Spark."""
        self._threads.job_description = description

    def _resolving(self, analyse: Callable[[], DataFrame]) -> DataFrame:
        """Call `analyse`, registering each missing relation it reports and trying again."""
        self.activate()
        for _ in range(MAX_LAZY_SYNCS):
            try:
                return analyse()
            except Exception as exc:
                if not self._register_missing(exc):
                    raise
        return analyse()

    def _register_missing(self, exc: BaseException) -> bool:
        """Register what `exc` says is missing, if the namespace has it. True when something was added."""
        try:
            relation = missing_relation(exc)
            if relation is not None:
                database, name = relation  # as the SQL spelled them; namespace ids are lower case
                return self.register_relation(namespace_id(database), name.lower())
            missing = missing_database(exc)
            if missing is not None and self.namespace.namespace_exists(namespace_id(missing)):
                self.catalog.ensure_database(namespace_id(missing))
                return True
        except InvalidNameError:
            pass  # a database no namespace maps to: Spark's own error stands
        return False

    def register_relation(self, namespace: Sequence[str], name: str) -> bool:
        """Register one table or view of the namespace in Spark's catalog; False if it has neither.

        Under the runtime's lock, views too: dbt's threads meet a view Spark does not know yet at
        the same time, and Spark's `CREATE OR REPLACE VIEW` checks and creates in two steps, so all
        but one of them would fail with TABLE_OR_VIEW_ALREADY_EXISTS. The lock is re-entrant: the
        relations the view reads are registered by the same thread while it creates the view."""
        object_id = [*namespace, name]
        self.backend.note_registered(object_id)
        # One catalog state for "view or table?" and the table's description (a request on S3 each).
        with self.lock, self.namespace.consistent_reads():
            try:
                view = self.namespace.describe_view(object_id)
            except errors.NamespaceError:
                if not self.namespace.table_exists(object_id):
                    return False
                self.refresh_table(object_id)
                return True
            self.catalog.register_view(object_id, view.sql)
        return True

    def enable_version_management(self) -> None:
        """Turn the spec's table version management on for the whole root (`__manifest` metadata).

        The engine reads the flag at every call, so commits of every process on this root follow the
        four steps from now on. Never turned off here: the root is shared, another project may rely
        on it. Checked once per runtime (the adapter calls this whenever it acquires a connection)."""
        if self.version_management_on:
            return
        if not self.namespace.version_management_enabled():
            self.namespace.alter_namespace_properties([], {TVM_KEY: "true"})
        self.version_management_on = True

    def last_committed(self, table_id: Sequence[str]) -> lance.LanceDataset | None:
        """The version of the table this process's current (or last) write committed, as of that
        commit; None when that write has committed nothing (yet), or only staged. Not the table's
        latest version: another process may have committed since; it answers what this process's
        own build left."""
        with self.lock:
            return self._committed.get(tuple(table_id))

    def forget_committed(self, table_id: Sequence[str]) -> None:
        """A write to the table starts (`open_write`): what an earlier write committed no longer
        tells what this build leaves (it may commit nothing, and others may have committed since)."""
        with self.lock:
            self._committed.pop(tuple(table_id), None)

    def writing(self, table_id: Sequence[str]) -> threading.RLock:
        """The lock this process's threads hold while they change one table (with `with`).

        dbt runs the batches of a microbatch model on several threads at once (the adapter declares
        MicrobatchConcurrency). Their queries run in parallel; each batch's change is then computed
        on the table's latest version and committed while no other thread of this process commits to
        that table, so concurrent batches never build on the same version and conflict. Writers in
        other processes still meet the engine's pinned-version check (14)."""
        with self.lock:
            return self._writers.setdefault(tuple(table_id), threading.RLock())

    def refresh_table(
        self,
        table_id: Sequence[str],
        committed: tuple[str, lance.LanceDataset] | None = None,
        built_on: lance.LanceDataset | None = None,
    ) -> None:
        """The one catalog refresh after a table changed: Spark reads what this process should read.

        During an atomic-publish run a table the run wrote reads its staged version; otherwise the
        namespace's latest version; a table that is gone (or declared without data) is forgotten.
        `committed`: the location of the version this process just committed, and that version,
        which the catalog takes as it was at that commit instead of asking the namespace again
        (and `last_committed` answers for it); `built_on`: the version that commit was made on
        (lance-core's read check of the new version then needs no open, `jvm_connector.own_commit`)."""
        self.backend.note_registered(table_id)
        with self.lock:
            staged = self.landing.read_target(table_id)
            if staged is not None:
                self.catalog.register_table(table_id, staged.path, staged.version)
                return
            if committed is not None:
                location, dataset = committed
                self._committed[tuple(table_id)] = dataset
                own = own_commit(built_on, dataset)
                self.catalog.register_table(table_id, location, schema=dataset.schema, committed=own)
                return
            try:
                info = self.namespace.describe_table(list(table_id))
            except errors.TableNotFoundError:
                info = None
            if info is None or info.declared_only:
                self.catalog.forget(table_id)
            else:
                self.catalog.register_table(table_id, info.location, schema=info.schema)


def _quiet_query_context_loggers() -> None:
    """Stop PySpark printing every captured SQL error, Java stack trace included, to stderr.

    The runtime catches "table not found" to register tables lazily, and real errors reach the dbt
    user through the adapter's exception handler with Spark's message and no Java frames.
    """
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).disabled = True
