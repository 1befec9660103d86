"""How this process reaches Spark: a session of its own (a JVM here) or a Spark Connect client.

The two differ in a handful of places: starting the session, making it a thread's active one,
reading a statement's shape, the filter-pushdown rewrite (which needs the JVM), warming the
`lance` source's Python workers, and which relations must be registered before a statement runs.
Each is a method of the backend, so the runtime that owns the session has no mode checks of its
own and a third way to reach Spark would be one more class here.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from pyspark.sql import DataFrame, SparkSession

from dbt.adapters.lancens.definitions.credentials import redact_connect_url, redact_secrets
from dbt.adapters.lancens.definitions.names import InvalidNameError, database_name, namespace_id
from dbt.adapters.lancens.runtime import connect_parse, jvm, plans
from dbt.adapters.lancens.runtime.errors import spark_error_message, spark_start_error
from dbt.adapters.lancens.spark import class_archive, get_or_create_session, remote
from dbt.adapters.lancens.spark.pushdown import sql_with_pushdown
from dbt.adapters.lancens.spark.relation_options import refuse_differing_options
from dbt.adapters.lancens.spark.remote import (
    RemoteSessionError,
    ServerWorkers,
    check_workers,
    connect_session,
)
from dbt.adapters.lancens.spark.warmup import warm_up


class SparkStartError(RuntimeError):
    """Spark could not start (most often: no Java 17); the message says what to install."""


class SparkBackend(Protocol):
    """What the runtime asks of the way it reaches Spark."""

    @property
    def reuses_catalog_entries(self) -> bool:
        """Whether a refresh that would create the same catalog entry again may keep it: yes where
        Spark's catalog is this process's own, no for a Connect server's, which other sessions
        change behind this one's back (runtime/session_catalog.py, `reuse`)."""
        ...

    def start(self) -> SparkSession:
        """Open the session; raise SparkStartError with what to install or fix."""
        ...

    def activate(self, spark: SparkSession, job_description: str | None) -> None:
        """Make `spark` the calling thread's active session (dbt runs models on several threads)."""
        ...

    def warm(self, spark: SparkSession) -> None:
        """Start the Python workers the `lance` source needs before the first model needs them."""
        ...

    def analyse(self, spark: SparkSession, statement: str, pushdown: bool) -> DataFrame:
        """The statement as a frame; `pushdown`: push filters into Lance where proven safe."""
        ...

    def parse_statement(self, spark: SparkSession, statement: str) -> plans.Statement | None:
        """What `statement` asks for when it is DDL or DML on a namespace object, else None."""
        ...

    def relations_to_register(self, statement: str) -> list[list[str]]:
        """Namespace objects (ids) to register before `statement` runs, beyond what Spark reports missing."""
        ...

    def note_registered(self, object_id: Sequence[str]) -> None:
        """This process registered `object_id` in its session."""
        ...

    def describe(self, spark: SparkSession) -> list[str]:
        """What `dbt debug` shows about this Spark."""
        ...


@dataclass(frozen=True)
class LocalSpark:
    """A session with its own driver JVM in this process (`master`: local threads or a cluster).

    Spark's catalog here is this process's own, so registering lazily, when Spark reports a relation
    missing, is enough."""

    master: str
    config: Mapping[str, str]
    files_dir: str | None = None  # Spark's console output and working files (spark/session.py)
    reuses_catalog_entries: bool = True

    def start(self) -> SparkSession:
        try:
            return get_or_create_session(
                master=self.master,
                config=dict(self.config),
                files_dir=self.files_dir,
                class_archive_dir=class_archive.default_directory(),
            )
        except Exception as exc:
            raise SparkStartError(spark_start_error(exc, self.files_dir)) from exc

    def activate(self, spark: SparkSession, job_description: str | None) -> None:
        jvm.activate(spark, job_description)

    def warm(self, spark: SparkSession) -> None:
        warm_up(spark)

    def analyse(self, spark: SparkSession, statement: str, pushdown: bool) -> DataFrame:
        refuse_differing_options(spark, statement)
        return sql_with_pushdown(spark, statement) if pushdown else spark.sql(statement)

    def parse_statement(self, spark: SparkSession, statement: str) -> plans.Statement | None:
        return jvm.parse_statement(spark, statement)

    def relations_to_register(self, statement: str) -> list[list[str]]:
        return []

    def note_registered(self, object_id: Sequence[str]) -> None:
        pass

    def describe(self, spark: SparkSession) -> list[str]:
        return [f"spark version: {spark.version} (master {spark.sparkContext.master})"]


@dataclass
class ConnectSpark:
    """A Spark Connect client of the server at `url`: no JVM in this process.

    The server's catalog is shared by all its sessions, so a name there may have been registered by
    an earlier dbt process (whose bound `lance` source this session lacks, so Spark fails with
    DATA_SOURCE_NOT_FOUND) or by another client. Each relation a statement names is therefore
    registered again from the namespace the first time this process uses it. Without a JVM there is
    no filter-pushdown rewrite, and statements are read by `connect_parse`."""

    url: str
    config: Mapping[str, str]
    reuses_catalog_entries: bool = False
    # What the server's Python workers run the `lance` source with (checked when connecting).
    workers: ServerWorkers | None = None
    # `db.name` pairs this process has registered in its own session.
    _registered: set[tuple[str, str]] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> SparkSession:
        """A session whose server's workers are known to run `lance` (else a clear error now, rather
        than a worker traceback at the first model). The URL's token never reaches the message."""
        shown = redact_connect_url(self.url)
        try:
            session = connect_session(self.url, self.config)
            self.workers = check_workers(session)
        except RemoteSessionError as exc:
            text = redact_secrets(str(exc), {}, self.url)
            raise SparkStartError(f"Spark Connect server {shown}: {text}") from exc
        except Exception as exc:
            text = redact_secrets(spark_error_message(exc), {}, self.url)
            message = f"dbt-lancens could not use the Spark Connect server {shown}: {text}"
            raise SparkStartError(message) from exc
        return session

    def activate(self, spark: SparkSession, job_description: str | None) -> None:
        remote.activate(spark)  # the Python side of a Connect session is per thread too

    def warm(self, spark: SparkSession) -> None:
        pass  # connecting already ran a task on the server's workers (check_workers)

    def analyse(self, spark: SparkSession, statement: str, pushdown: bool) -> DataFrame:
        return spark.sql(statement)

    def parse_statement(self, spark: SparkSession, statement: str) -> plans.Statement | None:
        return connect_parse.parse_statement(statement, spark._parse_ddl)  # type: ignore[attr-defined]

    def relations_to_register(self, statement: str) -> list[list[str]]:
        """Each `db.name` the statement spells that maps to a namespace object and that this process
        has not registered yet (noted now, before the catalog's own statements name it)."""
        found = []
        for database, name in connect_parse.two_part_names(statement):
            try:
                object_id = [*namespace_id(database), name.lower()]
            except InvalidNameError:
                continue  # not a database this adapter maps (a column reference `alias.column`)
            if self._first_registration(object_id):
                found.append(object_id)
        return found

    def note_registered(self, object_id: Sequence[str]) -> None:
        self._first_registration(object_id)

    def _first_registration(self, object_id: Sequence[str]) -> bool:
        key = (database_name(object_id[:-1]), object_id[-1])
        with self._lock:
            if key in self._registered:
                return False
            self._registered.add(key)
            return True

    def describe(self, spark: SparkSession) -> list[str]:
        lines = [f"spark version: {spark.version} (Spark Connect server {redact_connect_url(self.url)})"]
        if self.workers is not None:
            lines.append(
                "lance data source on the Spark Connect server: usable "
                f"(dbt-lancens {self.workers.dbt_lancens}, pylance {self.workers.pylance}, "
                f"workers' Python {self.workers.python})"
            )
        return lines
