"""Connections: every dbt thread gets a handle on the process's one Spark session and namespace."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from dbt.adapters.contracts.connection import AdapterResponse, Connection, ConnectionState
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.events.types import SQLQuery
from dbt.adapters.spark.connections import SparkConnectionManager
from dbt.flags import get_flags
from dbt_common.events.contextvars import get_node_info
from dbt_common.events.functions import fire_event
from dbt_common.exceptions import DbtDatabaseError, DbtRuntimeError
from dbt_common.utils import cast_to_str

from dbt.adapters.lancens.definitions.credentials import LancensCredentials, redact_connect_url
from dbt.adapters.lancens.definitions.sql_text import statements
from dbt.adapters.lancens.runtime.errors import (
    lost_session_message,
    missing_relation_message,
    spark_error_message,
    storage_refusal_message,
)
from dbt.adapters.lancens.runtime.process import LancensRuntime
from dbt.adapters.lancens.statements import route

logger = AdapterLogger("lancens")


class SparkSqlHandle:
    """The DB-API-shaped surface dbt's SQL connection manager expects, over `LancensRuntime.sql`.

    `job_description` names what is running (the node's query comment); the Spark jobs of every
    statement carry it, so the Spark UI shows which model they belong to."""

    def __init__(self, runtime: LancensRuntime, job_description: Callable[[], str | None]) -> None:
        self.runtime = runtime
        self.job_description = job_description
        self._rows: list[Any] | None = None
        self._description: list[tuple[Any, ...]] = []

    def cursor(self) -> SparkSqlHandle:
        return self

    def execute(self, sql: str, bindings: Sequence[Any] | None = None) -> None:
        if bindings:
            raise DbtRuntimeError("dbt-lancens does not support SQL bindings; render values into the SQL")
        self.runtime.describe_jobs(self.job_description())
        # Macros that write through the engine leave their statement empty.
        self._description, self._rows = [], []
        for statement in statements(sql):
            self._run(statement)

    def _run(self, statement: str) -> None:
        """One statement; its result replaces the previous statement's (a script returns its last).
        DML and DDL on namespace objects are carried out through the engine (statements/route.py)."""
        if route.apply(self.runtime, statement):
            self._description, self._rows = [], []
            return
        frame = self.runtime.sql(statement, pushdown=True)
        self._description = [
            (f.name, f.dataType.simpleString(), None, None, None, None, f.nullable)
            for f in frame.schema.fields
        ]
        # Spark evaluates lazily: a statement that returns no columns (DDL) already ran in sql().
        self._rows = frame.collect() if self._description else []

    @property
    def description(self) -> list[tuple[Any, ...]]:
        return self._description

    def fetchall(self) -> list[Any]:
        rows, self._rows = self._rows or [], None
        return rows

    def fetchmany(self, size: int) -> list[Any]:
        rows = self._rows or []
        self._rows = rows[size:]
        return rows[:size]

    def fetchone(self) -> Any:
        rows = self.fetchmany(1)
        return rows[0] if rows else None

    def close(self) -> None:
        self._rows = None

    def cancel(self) -> None:
        # Jobs of one process share one SparkContext; cancelling them all would cancel other threads.
        logger.debug("dbt-lancens: cancel is a no-op; Spark jobs of this process keep running")

    def rollback(self) -> None:
        logger.debug("dbt-lancens: no transactions; every write is one Lance commit")


# dbt commands that run Spark: for them Spark starts on a background thread as soon as the adapter
# exists, so its start-up overlaps dbt's parsing. Metadata commands (parse, ls, docs generate, debug,
# run-operation) keep starting Spark only if they use it.
_SPARK_COMMANDS = frozenset({"run", "build", "seed", "snapshot", "test", "show", "retry", "clone"})


class LancensConnectionManager(SparkConnectionManager):
    TYPE = "lancens"

    def __init__(self, profile: Any, mp_context: Any) -> None:
        super().__init__(profile, mp_context)
        if getattr(get_flags(), "WHICH", None) in _SPARK_COMMANDS:
            try:
                self._runtime_for(profile.credentials).start_in_background()
            except Exception as exc:  # open() reports a bad profile with its own message
                logger.debug(f"Spark not started in the background: {exc!r}")

    def _runtime_for(self, credentials: LancensCredentials) -> LancensRuntime:
        project_root = getattr(self.profile, "project_root", None)
        return LancensRuntime.shared(
            credentials.namespace_properties(project_root),
            credentials.master,
            credentials.spark_config,
            spark_files_dir=_spark_files_dir(project_root),
            remote=credentials.remote,
            spark_connector=credentials.spark_connector,
            connector_jars_on_nodes=credentials.connector_jars_on_nodes,
        )

    @contextmanager
    def exception_handler(self, sql: str) -> Iterator[None]:
        from dbt.adapters.lancens.namespace import errors as ns_errors

        try:
            yield
        except (DbtRuntimeError, DbtDatabaseError) as exc:
            redacted = self._redact(str(exc.msg))
            if redacted != str(exc.msg):
                exc.msg = redacted
            raise
        except ns_errors.NamespaceError as exc:
            text = f"Lance namespace error {exc.code}: {exc}"
            message = storage_refusal_message(exc, text, self._root())
            raise DbtDatabaseError(self._redact(message or text)) from exc
        except (KeyboardInterrupt, SystemExit, GeneratorExit):
            raise
        except BaseException as exc:
            # Lance reports Rust panics as pyo3's PanicException, a BaseException: dbt only handles
            # Exception, so letting one through would kill the dbt worker thread and hang the run.
            logger.debug(f"Error while running:\n{sql}")
            text = spark_error_message(exc)
            root = self._root()
            message = (
                missing_relation_message(exc, root, self._namespace_exists)
                or storage_refusal_message(exc, text, root)
                or lost_session_message(text, self._server())
            )
            raise DbtDatabaseError(self._redact(message or text)) from exc

    def _root(self) -> str:
        """The namespace root as the profile names it (what the user configured and can change)."""
        credentials = getattr(getattr(self, "profile", None), "credentials", None)
        return str(getattr(credentials, "root", ""))

    def _namespace_exists(self, namespace: list[str]) -> bool:
        """Whether the profile's root has the namespace (the root namespace always exists); True
        when that cannot be read either, so the error names the table, as Spark did."""
        credentials = self.profile.credentials
        if not namespace or not isinstance(credentials, LancensCredentials):
            return True
        try:
            return self._runtime_for(credentials).namespace.namespace_exists(namespace)
        except Exception:
            return True

    def _server(self) -> str:
        """The Spark Connect server's URL without its token; empty for a local Spark."""
        remote = getattr(getattr(getattr(self, "profile", None), "credentials", None), "remote", None)
        return redact_connect_url(remote) if remote else ""

    def _redact(self, text: str) -> str:
        """Error text without the profile's secrets (object-store errors may echo request options)."""
        credentials = getattr(getattr(self, "profile", None), "credentials", None)
        return credentials.redact(text) if isinstance(credentials, LancensCredentials) else text

    def open(self, connection: Connection) -> Connection:  # type: ignore[override]
        if connection.state == ConnectionState.OPEN:
            return connection
        credentials: LancensCredentials = connection.credentials  # type: ignore[assignment]
        try:
            runtime = self._runtime_for(credentials)
        except Exception as exc:
            raise DbtRuntimeError(_connect_error(credentials, exc)) from exc
        _check_root(runtime, credentials)
        connection.handle = SparkSqlHandle(runtime, self.job_description)
        connection.state = ConnectionState.OPEN  # type: ignore[assignment]
        return connection

    def end_shared_reads(self) -> None:
        """Stop serving the catalog state `_check_root` holds for the start of a run (on any thread,
        with or without a connection of its own): reads find the latest state again."""
        credentials = self.profile.credentials
        if not isinstance(credentials, LancensCredentials):
            return
        try:
            runtime = self._runtime_for(credentials)
        except Exception:  # a profile no runtime can be made of has no state held
            return
        runtime.namespace.end_shared_reads()

    def job_description(self) -> str | None:
        """The calling thread's query comment (dbt sets it per node), else the node being run."""
        comment = self.query_header.comment.query_comment if self.query_header is not None else None
        return comment or get_node_info().get("unique_id")

    def model_sql(self, code: str, language: str = "sql") -> str:
        """A model build's code made ready the way dbt runs every statement (`add_query`): the query
        comment added (SQL only), logged as a SQLQuery event, and the Spark job description set."""
        connection = self.get_thread_connection()
        if language == "sql":
            code = self._add_query_comment(code)
        fire_event(SQLQuery(conn_name=cast_to_str(connection.name), sql=code, node_info=get_node_info()))
        connection.handle.runtime.describe_jobs(self.job_description())
        return code

    @classmethod
    def get_response(cls, cursor: Any) -> AdapterResponse:
        return AdapterResponse(_message="OK")

    def cancel(self, connection: Connection) -> None:
        connection.handle.cancel()


def _spark_files_dir(project_root: str | None) -> str:
    """`<dbt's log path>/spark`: Spark's console output and working files sit beside dbt's own log."""
    log_path = getattr(get_flags(), "LOG_PATH", None) or "logs"
    return os.path.join(project_root or os.getcwd(), str(log_path), "spark")


def _check_root(runtime: LancensRuntime, credentials: LancensCredentials) -> None:
    """Fail the connection, before anything is written, when the root cannot be read as a namespace.

    A root that is a file, or whose `__manifest` cannot be opened (corrupt version file, no access),
    would otherwise surface as a raw storage error in the middle of dbt's schema creation. Checked
    once per runtime: a listing of the root namespace, which reads `__manifest`.

    The catalog state it reads is held for dbt's schema listing and relation cache fill, which
    follow on other threads and calls (`DirectoryNamespace.share_reads`): the start of a run reads
    the catalog once. The end of the cache fill, the first node or the first commit ends that
    (`LancensAdapter.set_relations_cache`, `pre_model_hook`)."""
    namespace = runtime.namespace
    if runtime.root_checked:
        return
    if "://" not in namespace.root and os.path.isfile(namespace.root):
        raise DbtRuntimeError(
            f"dbt-lancens: the namespace root {namespace.root!r} is a file, not a directory; "
            "point `root` at a directory (it is created if it does not exist)"
        )
    try:
        namespace.share_reads()
        with namespace.consistent_reads(shared=True):
            namespace.list_namespaces([], limit=1)
    except Exception as exc:
        text = credentials.redact(spark_error_message(exc))
        raise DbtRuntimeError(
            f"dbt-lancens could not read the namespace root {namespace.root!r} (its __manifest table "
            f"or directory listing); nothing was written: {text}"
        ) from exc
    runtime.root_checked = True


def _connect_error(credentials: LancensCredentials, exc: BaseException) -> str:
    """A message naming what to fix in the root or the object store (Spark starts later, on first use)."""
    text = credentials.redact(spark_error_message(exc))
    return f"dbt-lancens could not open the namespace root {credentials.root!r}: {text}"
