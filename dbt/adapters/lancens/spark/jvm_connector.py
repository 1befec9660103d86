"""The JVM connector's jars, its class path settings, and whether a session's JVM can read a table
through it (docs/jvm-connector.md).

The connector (`connector/`, a DataSource V2 reader over lance-core) is built into `jars/` when the
package is installed (`build_backend/connector_build.py`): the connector jar, and `classpath.txt`
naming the jars it needs beside Spark's (lance-core, lance-namespace-core, arrow-c-data,
arrow-dataset). They go on the driver's and executors' *system* class path
(`spark.*.extraClassPath`): through `spark.jars` (a child class loader) lance-core's JNI thread
cannot find its classes, and none of lance-core's own netty/jackson/Arrow is listed, so Spark's win.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

import lance
from pyspark.sql import SparkSession

from dbt.adapters.lancens.spark.java_classes import java_class

SOURCE_CLASS = "org.dbtlancens.spark.LanceSource"
_READ_CHECK_CLASS = "org.dbtlancens.spark.ReadCheck"
JARS_DIR = Path(__file__).resolve().parent / "jars"
CONNECTOR_JAR = "lancens-spark-connector.jar"
CLASSPATH_FILE = "classpath.txt"
_JAVA_LONG_MAX = (1 << 63) - 1
CLASS_PATH_SETTINGS = ("spark.driver.extraClassPath", "spark.executor.extraClassPath")


class ConnectorUnavailable(RuntimeError):
    """The connector's jars are not where the package expects them; the message says what is missing."""


def class_path(jars_dir: Path = JARS_DIR) -> list[str]:
    """The connector jar and the jars it needs, each checked to exist (else ConnectorUnavailable)."""
    jar = jars_dir / CONNECTOR_JAR
    listing = jars_dir / CLASSPATH_FILE
    if not jar.is_file() or not listing.is_file():
        raise ConnectorUnavailable(
            f"the JVM connector is not built ({jar} missing): reinstall dbt-lancens with Maven and a JDK "
            "on PATH (`pip install -e .` builds it)"
        )
    entries = [str(jar), *(entry for entry in listing.read_text().strip().split(os.pathsep) if entry)]
    missing = [entry for entry in entries if not os.path.isfile(entry)]
    if missing:
        raise ConnectorUnavailable(
            f"jars the JVM connector needs are missing: {', '.join(missing)} (Maven's local repository "
            "changed since the install; reinstall dbt-lancens)"
        )
    return entries


def with_class_path(config: Mapping[str, str], entries: list[str]) -> dict[str, str]:
    """`config` with `entries` after any class path entries of the caller's own, for the driver and
    the executors."""
    settings = dict(config)
    if not entries:
        return settings
    for key in CLASS_PATH_SETTINGS:
        own = [entry for entry in settings.get(key, "").split(os.pathsep) if entry]
        settings[key] = os.pathsep.join([*own, *(entry for entry in entries if entry not in own)])
    return settings


def spark_settings() -> dict[str, str]:
    """The settings a plain PySpark job needs to read Lance tables with the connector:
    ``SparkSession.builder.config(map=spark_settings()).getOrCreate()``, then
    ``spark.read.format("lance_jvm").load(location)`` (docs/jvm-connector.md)."""
    return with_class_path({}, class_path())


def loaded(spark: SparkSession) -> str | None:
    """None when the session's driver JVM has the connector, else why not (a session started
    without the class path, or a Spark Connect client, which has no JVM here)."""
    jvm = getattr(spark, "_jvm", None)
    if jvm is None:
        return _loaded_by_server(spark)
    try:
        java_class(jvm, "java.lang.Class").forName(SOURCE_CLASS)
    except Exception as exc:  # py4j's error for a class the JVM cannot load
        return f"the driver JVM cannot load {SOURCE_CLASS} (started without its class path?): {exc}"
    return None


def unreadable(
    spark: SparkSession,
    location: str,
    version: int | None,
    storage_options: Mapping[str, str],
    committed: tuple[int, int] | None = None,
) -> str | None:
    """None when the driver JVM's lance-core reads the table at `version` (None: the latest), else
    lance-core's reason (a reader flag or data-file version newer than it knows, a type it has no
    reader for). Asked of lance-core itself (`ReadCheck`), not of a list of flags kept here.

    `committed`: (base, new) when the latest is a version this process just committed on `base`
    with its schema and data-file version (`own_commit`): lance-core then answers from the base it
    holds, without opening the new version, while that is still the latest (docs/jvm-connector.md,
    "What the check costs")."""
    if version is not None and version > _JAVA_LONG_MAX:
        # a staged version (atomic publish) numbers past 2**63; lance-core's Java API takes a signed long
        return f"version {version} is past the signed 64-bit range of lance-core's Java API"
    if getattr(spark, "_jvm", None) is None:
        return _unreadable_by_server(spark, location, version, storage_options)
    check = java_class(spark._jvm, _READ_CHECK_CLASS)
    options = json.dumps(dict(storage_options))
    if version is None and committed is not None:
        base, new = committed
        reason = check.unreadableCommitted(location, int(base), int(new), options)
    else:
        reason = check.unreadable(location, -1 if version is None else int(version), options)
    return None if reason is None else str(reason)


def own_commit(base: lance.LanceDataset | None, committed: lance.LanceDataset) -> tuple[int, int] | None:
    """(base, new) versions when `committed`, a version this process's write just committed, was
    made directly on `base` (no other commit between) with the same schema and data-file version:
    its files are the table's own file version, written here, so lance-core reads it if it reads
    `base`. None otherwise (a new table, a rebased commit, a changed schema or file version)."""
    if base is None or committed.version != base.version + 1:
        return None
    if committed.data_storage_version != base.data_storage_version or committed.schema != base.schema:
        return None
    return base.version, committed.version


# Through Spark Connect there is no py4j gateway: the server is asked through the source itself.
# Its schema inference fails naming the missing path when the class loads (no table is opened), and
# with option read_check it runs ReadCheck and fails with `_UNREADABLE` and the reason.
_NO_PATH = "the lance_jvm source needs a path"
_UNREADABLE = "lance_jvm cannot read this table: "


def _loaded_by_server(spark: SparkSession) -> str | None:
    try:
        _ = spark.read.format(SOURCE_CLASS).load().schema  # analysed by the server
    except Exception as exc:  # the server's error, as the client raises it
        if _NO_PATH in str(exc):
            return None
        return (
            f"the Spark Connect server cannot load {SOURCE_CLASS} (no connector jars on its class path?): "
            f"{exc}"
        )
    return None


def _unreadable_by_server(
    spark: SparkSession, location: str, version: int | None, storage_options: Mapping[str, str]
) -> str | None:
    options = {"path": location, "storage_options": json.dumps(dict(storage_options)), "read_check": "true"}
    if version is not None:
        options["version"] = str(int(version))
    try:
        _ = spark.read.format(SOURCE_CLASS).options(**options).load().schema
    except Exception as exc:
        message = str(exc)
        start = message.find(_UNREADABLE)
        return message[start + len(_UNREADABLE) :].strip().splitlines()[0] if start >= 0 else message
    return None
