"""A SparkSession that is a Spark Connect client: the calling process starts no JVM.

The server runs every query, and the ``lance`` data source runs in the *server's* Python workers, so
dbt-lancens (with pylance) must be importable there. ``check_workers`` proves that once, when the
session is made, by running one tiny task that imports the package, and fails with a message naming
what to install where; otherwise the first model would fail deep inside a worker traceback.

PySpark switches a whole process to Connect mode when it opens a Connect session
(``SPARK_CONNECT_MODE_ENABLED``): one process is either a local-Spark process or a Connect client,
never both, so a process that already runs a local SparkContext is refused here with that reason.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql import SparkSession

from dbt.adapters.lancens.spark.datasource import register_data_source

# Session settings a Connect client can set (runtime SQL settings); the rest is the server's.
REMOTE_DEFAULTS = {"spark.sql.session.timeZone": "UTC"}
# Retries of the first request to the server (~8 s of back-off in all) before it counts as unreachable.
FIRST_CONTACT_RETRIES = 5
PACKAGE = "dbt-lancens"


class RemoteSessionError(RuntimeError):
    """The Spark Connect session could not be opened or its workers cannot run ``lance``."""


@dataclass(frozen=True)
class ServerWorkers:
    """What a task on the server reported about its Python: the versions ``lance`` runs with."""

    dbt_lancens: str
    pylance: str
    python: str


def connect_session(url: str, config: Mapping[str, str] | None = None) -> SparkSession:
    """A Spark Connect session on ``url`` (``sc://host:port[;token=...]``) with ``lance`` registered.

    ``config`` holds runtime settings for the session (static ones belong to the server's own
    configuration). Callers name the server in errors themselves, without its token."""
    from pyspark.core.context import SparkContext
    from pyspark.sql.connect.client.retries import DefaultPolicy  # Connect's modules: clients only

    if SparkContext._active_spark_context is not None:
        raise RemoteSessionError(
            "this process already runs a local Spark (a `master` session); PySpark cannot be a Spark "
            "Connect client in the same process"
        )
    # Made without settings, the session does not contact the server yet (the builder would send
    # them at once, with PySpark's retry policy).
    session = SparkSession.builder.remote(url).getOrCreate()
    client = session.client
    run_policies = client.get_retry_policies()
    # PySpark retries an unreachable server for 10 minutes or more: a mistyped host or port would
    # hang `dbt run` silently. The first contact gives up after a few seconds; once the server has
    # answered, the run keeps PySpark's patient policy for transient failures.
    client.set_retry_policies([DefaultPolicy(max_retries=FIRST_CONTACT_RETRIES, max_backoff=4000)])
    try:
        for key, value in {**REMOTE_DEFAULTS, **dict(config or {})}.items():
            session.conf.set(key, value)
    except BaseException:
        client.close()  # else PySpark's exit hook asks the dead server to release the session, for minutes
        raise
    finally:
        client.set_retry_policies(run_policies)
    register_data_source(session)
    return session


def activate(spark: SparkSession) -> None:
    """Make the Connect session the calling thread's active one.

    A Connect session is active only on the thread that opened it; pandas-on-Spark
    (`DataFrame.pandas_api()` in a Python model) asks the thread's active session and, finding none
    on a dbt model thread, tries to open a session of its own with no URL (CONNECT_URL_NOT_SET).
    PySpark has no public setter; its builder uses this one on the opening thread."""
    type(spark)._set_default_and_active_session(spark)  # type: ignore[attr-defined]


def is_remote(spark: SparkSession) -> bool:
    """True for a Spark Connect session (no JVM gateway in this process)."""
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    return isinstance(spark, ConnectSession)


def _report_worker(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Runs in a server worker: unpickling this function imports dbt-lancens there, and the body
    imports pylance and the data source as a ``lance`` read or write would."""
    from importlib.metadata import version

    import lance

    import dbt.adapters.lancens.spark.datasource  # noqa: F401  (what the lance source unpickles)

    for _ in batches:
        pass
    yield pa.RecordBatch.from_pylist(
        [{"dbt_lancens": version(PACKAGE), "pylance": lance.__version__, "python": sys.executable}]
    )


def check_workers(spark: SparkSession) -> ServerWorkers:
    """Run one task on the server that imports dbt-lancens and pylance; raise RemoteSessionError
    naming what to install where when it cannot."""
    try:
        row = (
            spark.range(1)
            .mapInArrow(_report_worker, "dbt_lancens string, pylance string, python string")
            .collect()[0]
        )
    except Exception as exc:
        text = str(exc)
        missing = next((line.strip() for line in text.splitlines() if "No module named" in line), None)
        if missing is None:
            raise
        raise RemoteSessionError(
            f"the Spark Connect server's Python workers cannot import {PACKAGE} ({missing}). The "
            f"`lance` data source runs there: install {PACKAGE} (which brings pylance), the same "
            "version as this dbt project uses, into the Python environment the server starts its "
            "workers with (the server's PYSPARK_PYTHON or spark.pyspark.python), then restart the server"
        ) from exc
    return ServerWorkers(dbt_lancens=row["dbt_lancens"], pylance=row["pylance"], python=row["python"])
