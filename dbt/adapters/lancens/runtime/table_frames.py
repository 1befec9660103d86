"""A Lance table version as a Spark DataFrame, through the reader the process chose.

Catalog tables pick their reader in `session_catalog.py`; the reads the adapter plans as DataFrames
(`at_version`'s view, the version an incremental write builds on, the stored vectors an embedding
run reuses) come here, so that they too go through the JVM connector when the profile chose it and
lance-core reads the table, and through the Python data source otherwise (logged, as for catalog
tables). Both readers give the same columns in the same order, with `_rowaddr` last when asked for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dbt.adapters.events.logging import AdapterLogger
from pyspark.sql import DataFrame

from dbt.adapters.lancens.runtime.process import LancensRuntime
from dbt.adapters.lancens.spark import jvm_connector
from dbt.adapters.lancens.spark.options import ROW_ADDRESS, read_options
from dbt.adapters.lancens.text.quoting import quote

logger = AdapterLogger("lancens")


def table_frame(
    runtime: LancensRuntime,
    location: str,
    version: int,
    columns: Sequence[str] | None = None,
    row_address: bool = False,
    storage_options: Mapping[str, str] | None = None,
) -> DataFrame:
    """`version` of the table at `location`: every column (or only `columns`, in that order),
    then `_rowaddr` (Lance's row address) when `row_address`. `storage_options`: the table's own
    (else the namespace's)."""
    storage = runtime.namespace.storage_options if storage_options is None else storage_options
    options = read_options(location, storage, version)
    runtime.activate()
    spark = runtime.spark
    if _jvm_reads(runtime, location, version, storage):
        frame = spark.read.format(jvm_connector.SOURCE_CLASS).options(**options).load()
        wanted = list(columns) if columns else list(frame.columns)
        # `_rowaddr` is the connector's metadata column: Spark adds it only when it is selected
        return frame.select(*(quote(name) for name in [*wanted, *([ROW_ADDRESS] if row_address else [])]))
    if columns:
        options["columns"] = ",".join(columns)
    if row_address:
        options["row_address"] = "true"
    return spark.read.format("lance").options(**options).load()


def _jvm_reads(runtime: LancensRuntime, location: str, version: int, storage: Mapping[str, str]) -> bool:
    """Whether this read goes through the JVM connector: chosen, and lance-core reads the table."""
    if not runtime.connector.jvm:
        return False
    reason = jvm_connector.unreadable(runtime.spark, location, version, storage)
    if reason is not None:
        logger.info(
            f"dbt-lancens: {location} (version {version}) is read through the Python data source: "
            f"the JVM connector's lance-core cannot read it ({reason})"
        )
    return reason is None
