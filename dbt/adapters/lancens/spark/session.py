"""The one SparkSession of a process, configured for a Lance warehouse.

Why each setting:
- ``spark.sql.catalogImplementation=in-memory``: the Lance namespace is the catalog of record, so
  Spark's catalog is a per-session cache (see ``catalog.py``); Hive/Derby would leave
  ``metastore_db`` and ``spark-warehouse`` in the working directory.
- loopback driver host and bind address (and ``SPARK_LOCAL_IP``): nothing listens beyond 127.0.0.1;
  the web UI is off by default for the same reason (pass ``spark.ui.enabled=true`` to turn it on).
- ``spark.pyspark.python`` = ``sys.executable``: Python workers must be the interpreter that has
  dbt-lancens and pylance installed, even when dbt was started without activating its virtualenv.
- The Python worker daemon stays on (workers are forked from it, which is much cheaper than a new
  interpreter per task). The daemon only imports pyspark; pylance is imported by a forked worker,
  which never forks again, so Lance never lives in a process that forks (see README "Spark and Lance").

This module deliberately does not import lance: the driver forks the JVM launcher with a
``preexec_fn``, and pylance warns (rightly) when a process that loaded it forks.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import warnings
from collections.abc import Mapping

from pyspark.sql import SparkSession

from dbt.adapters.lancens.spark.datasource import register_data_source

_LOOPBACK = "127.0.0.1"
_lock = threading.Lock()
_warehouse_dir: str | None = None


def _warehouse() -> str:
    """A per-process temporary warehouse dir, so Spark never writes into the cwd."""
    global _warehouse_dir
    if _warehouse_dir is None:
        _warehouse_dir = tempfile.mkdtemp(prefix="dbt-lancens-warehouse-")
    return _warehouse_dir


def default_config() -> dict[str, str]:
    """The settings every dbt-lancens session starts from (callers' ``config`` overrides them)."""
    return {
        "spark.sql.catalogImplementation": "in-memory",
        "spark.sql.warehouse.dir": _warehouse(),
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
) -> SparkSession:
    """Return this process's SparkSession, creating it on first call, with ``lance`` registered.

    Idempotent: later calls return the active session (static settings such as the master cannot
    change once the JVM runs; runtime settings in ``config`` are applied to it).
    """
    os.environ.setdefault("SPARK_LOCAL_IP", _LOOPBACK)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    settings = {**default_config(), **dict(config or {})}
    with _lock:
        active = SparkSession.getActiveSession()
        if active is not None:
            for key, value in (config or {}).items():
                if not active.conf.isModifiable(key):
                    continue
                active.conf.set(key, value)
            register_data_source(active)
            return active
        builder = SparkSession.builder.master(master).appName(app_name)
        for key, value in settings.items():
            builder = builder.config(key, value)
        with warnings.catch_warnings():
            # Starting the JVM forks and immediately execs `java`: nothing of lance runs in the
            # child, so pylance's fork-safety warning (raised by its at-fork hook) does not apply.
            warnings.filterwarnings("ignore", message="lance is not fork-safe")
            session = builder.getOrCreate()
        register_data_source(session)
        return session
