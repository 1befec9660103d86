"""The one SparkSession of a process, configured for a Lance warehouse.

Why each setting:
- ``spark.sql.catalogImplementation=in-memory``: the Lance namespace is the catalog of record, so
  Spark's catalog is a per-session cache (see ``catalog.py``); Hive/Derby would leave
  ``metastore_db`` and ``spark-warehouse`` in the working directory (the warehouse dir is a temp dir).
- loopback driver host and bind address (and ``SPARK_LOCAL_IP``): nothing listens beyond 127.0.0.1;
  the web UI is off by default for the same reason (pass ``spark.ui.enabled=true`` to turn it on).
- ``spark.pyspark.python`` = ``sys.executable``: Python workers must be the interpreter that has
  dbt-lancens and pylance installed, even when dbt was started without activating its virtualenv.
- The Python worker daemon stays on (workers are forked from it, which is much cheaper than a new
  interpreter per task). The daemon only imports pyspark; pylance is imported by a forked worker,
  which never forks again, so Lance never lives in a process that forks (docs/spark-datasource.md).

``files_dir`` keeps Spark's own output off the caller's console: the JVM's stdout and stderr
(log4j lines, JVM banners, progress bars, Python workers' stderr) go to ``spark.log`` there. A
``local-cluster`` master's workers keep their working directories (executor logs, about 300 KB a run)
in a temporary directory, never in ``<pyspark>/work`` nor beside the log; ``spark.log`` names it.

This module deliberately does not import lance: the driver forks the JVM launcher with a
``preexec_fn``, and pylance warns (rightly) when a process that loaded it forks.
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import BinaryIO

from pyspark import SparkConf, SparkContext
from pyspark.find_spark_home import _find_spark_home
from pyspark.java_gateway import launch_gateway
from pyspark.sql import SparkSession

from dbt.adapters.lancens.spark.datasource import register_data_source

_LOOPBACK = "127.0.0.1"
LOG_FILE = "spark.log"
_SHADOW_HOME_PREFIX = "dbt-lancens-spark-home-"


def default_config() -> dict[str, str]:
    """The settings every dbt-lancens session starts from (callers' ``config`` overrides them)."""
    return {
        "spark.sql.catalogImplementation": "in-memory",
        "spark.driver.host": _LOOPBACK,
        "spark.driver.bindAddress": _LOOPBACK,
        "spark.ui.enabled": "false",
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
        "spark.executorEnv.PYSPARK_PYTHON": sys.executable,
        "spark.executorEnv.SPARK_LOCAL_IP": _LOOPBACK,
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.session.timeZone": "UTC",
    }


def get_or_create_session(
    master: str = "local[*]",
    config: Mapping[str, str] | None = None,
    app_name: str = "dbt-lancens",
    files_dir: str | None = None,
) -> SparkSession:
    """Return this process's SparkSession, creating it on first call, with ``lance`` registered.

    Idempotent: later calls return the active session (static settings such as the master cannot
    change once the JVM runs; runtime settings in ``config`` are applied to it). ``files_dir``
    (created if missing) takes Spark's console output and working files, see the module docstring.
    """
    os.environ.setdefault("SPARK_LOCAL_IP", _LOOPBACK)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    active = _running_session()
    if active is not None:
        for key, value in (config or {}).items():
            if active.conf.isModifiable(key):
                active.conf.set(key, value)
        register_data_source(active)
        return active
    settings = {
        **default_config(),
        "spark.sql.warehouse.dir": tempfile.mkdtemp(prefix="dbt-lancens-warehouse-"),
        **({"spark.ui.showConsoleProgress": "false"} if files_dir else {}),
        **dict(config or {}),
    }
    with warnings.catch_warnings():
        # Starting the JVM forks and immediately execs `java`: nothing of lance runs in the
        # child, so pylance's fork-safety warning (raised by its at-fork hook) does not apply.
        warnings.filterwarnings("ignore", message="lance is not fork-safe")
        if files_dir is not None:
            _start_jvm(master, app_name, settings, files_dir)
        builder = SparkSession.builder.master(master).appName(app_name)
        for key, value in settings.items():
            builder = builder.config(key, value)
        session = builder.getOrCreate()
    register_data_source(session)
    return session


def _running_session() -> SparkSession | None:
    """The process's session if its JVM already runs, asked from any thread.

    `SparkSession.getActiveSession()` is per thread: a session started on dbt's background or model
    threads is not "active" on another, and launching a driver JVM again would leak one JVM per
    thread that asks (each takes hundreds of MB). The builder returns the existing session then."""
    if SparkContext._active_spark_context is None:
        return None
    return SparkSession.getActiveSession() or SparkSession.builder.getOrCreate()


def _start_jvm(master: str, app_name: str, settings: Mapping[str, str], files_dir: str) -> None:
    """Launch the driver JVM with its stdout and stderr in ``files_dir/spark.log``.

    PySpark launches the JVM with the caller's console as its output; launching it here first (the
    session builder then reuses the gateway) is PySpark's own hook for capturing that output."""
    os.makedirs(files_dir, exist_ok=True)
    conf = SparkConf(loadDefaults=False).setMaster(master).setAppName(app_name).setAll(list(settings.items()))
    with open(os.path.join(files_dir, LOG_FILE), "ab") as log, _spark_home_for(master, log):
        gateway = launch_gateway(conf, popen_kwargs={"stdout": log, "stderr": log})
    SparkContext._ensure_initialized(gateway=gateway, conf=conf)


@contextmanager
def _spark_home_for(master: str, log: BinaryIO) -> Iterator[None]:
    """For a ``local-cluster`` master, launch the JVM with a SPARK_HOME whose ``work`` is ours.

    Its in-process standalone workers write executor logs to ``$SPARK_HOME/work`` (no setting moves
    it), which for a pip-installed PySpark is inside site-packages. The shadow home, a temporary
    directory named in ``log``, links every entry of the real one (bin, jars, python, ...) and has
    its own ``work`` directory."""
    if not master.startswith("local-cluster"):
        yield
        return
    real = _find_spark_home()
    shadow = tempfile.mkdtemp(prefix=_SHADOW_HOME_PREFIX)
    os.makedirs(os.path.join(shadow, "work"))
    log.write(f"dbt-lancens: local-cluster workers' directories are in {shadow}/work\n".encode())
    log.flush()
    for entry in os.listdir(real):
        link = os.path.join(shadow, entry)
        if entry != "work":
            os.symlink(os.path.join(real, entry), link)
    previous = os.environ.get("SPARK_HOME")
    os.environ["SPARK_HOME"] = shadow
    try:
        yield
    finally:
        if previous is None:
            del os.environ["SPARK_HOME"]
        else:
            os.environ["SPARK_HOME"] = previous
