"""The ``lance`` PySpark data source: schema, reader and writer over a Lance table location.

Spark pickles this class into Python workers: ``schema``/``reader``/``writer`` run in planner
workers on the driver, ``read``/``write`` in executor workers, ``commit``/``abort`` in a worker of
the driver. Options are parsed on construction so a bad option fails at planning, not in a task.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from pyspark.sql import SparkSession
from pyspark.sql.datasource import DataSource
from pyspark.sql.types import LongType, StructField, StructType

from dbt.adapters.lancens.spark.column_names import column_names
from dbt.adapters.lancens.spark.dataset import open_dataset, try_open_latest
from dbt.adapters.lancens.spark.options import ROW_ADDRESS, LanceOptions
from dbt.adapters.lancens.spark.reader import LanceReader
from dbt.adapters.lancens.spark.types import (
    fixed_sizes_from_metadata,
    lance_write_schema,
    spark_arrow_schema,
    to_spark_schema,
)
from dbt.adapters.lancens.spark.writer import LanceWriter


class LanceDataSource(DataSource):
    """``spark.read.format("lance").load(uri)`` and ``df.write.format("lance").save(uri)``.

    Subclasses made by ``bound_source`` carry fixed options (``bound_options``) under their own
    short name; the options given at use time are added on top.
    """

    short_name = "lance"
    bound_options: dict[str, str] = {}

    def __init__(self, options: dict[str, str]) -> None:
        super().__init__({**self.bound_options, **dict(options)})

    @classmethod
    def name(cls) -> str:
        return cls.short_name

    @property
    def lance_options(self) -> LanceOptions:
        return LanceOptions.parse(self.options)

    def schema(self) -> StructType:
        """The table's schema at the requested version (only ``columns`` if that option is set),
        with ``_rowaddr`` last if ``row_address`` is set."""
        options = self.lance_options
        spark_schema = to_spark_schema(open_dataset(options).schema)
        known = column_names(spark_schema.names)
        if options.columns:
            wanted = column_names(options.columns)
            unknown = sorted(name for name in wanted if name not in known)
            if unknown:
                raise ValueError(f"option columns names {unknown} not in the table")
            spark_schema = StructType([field for field in spark_schema.fields if field.name in wanted])
        if not options.row_address:
            return spark_schema
        if ROW_ADDRESS in known:
            raise ValueError(f"option row_address: the table already has a column {known[ROW_ADDRESS]!r}")
        return StructType([*spark_schema.fields, StructField(ROW_ADDRESS, LongType(), nullable=False)])

    def reader(self, schema: StructType) -> LanceReader:
        return LanceReader(self.lance_options, schema)

    def writer(self, schema: StructType, overwrite: bool) -> LanceWriter:
        """Plan a write: pin the read version and settle the Lance schema before any task runs."""
        options = self.lance_options
        existing = try_open_latest(options)
        # an option names its column in lower case (Spark lower-cases option keys) and wins over
        # the size a column's metadata carries, whatever the column's case
        chosen = column_names(options.fixed_sizes)
        from_metadata = fixed_sizes_from_metadata(schema)
        sizes = {name: size for name, size in from_metadata.items() if name not in chosen}
        target = lance_write_schema(
            spark_arrow_schema(schema),
            existing.schema if existing is not None else None,
            {**sizes, **options.fixed_sizes},
            append=not overwrite,
        )
        return LanceWriter(
            options,
            target,
            overwrite=overwrite,
            read_version=existing.version if existing is not None else None,
            storage_version=existing.data_storage_version if existing is not None else None,
            base=existing,
        )


PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"


def register_data_source(spark: SparkSession) -> None:
    """Make ``format("lance")`` resolve in ``spark`` (safe to call repeatedly).

    Also turns on Spark's Python filter pushdown for the session: ``LanceReader`` implements
    ``pushFilters``, and with that setting off (Spark's default) PySpark refuses to plan any read
    of such a reader. The reader still keeps no filter unless asked to (``filter_pushdown``).
    """
    spark.conf.set(PUSHDOWN_CONF, "true")
    spark.dataSource.register(LanceDataSource)


def bound_source(options: Mapping[str, str]) -> type[LanceDataSource]:
    """A ``lance`` data source with ``options`` built in, named ``lance_<digest of the options>``.

    Why: Spark 4.3 gives a Python data source no options when it reads a *catalog* table, so
    ``CREATE TABLE t USING lance LOCATION '<uri>'`` (or ``OPTIONS (path ...)``) registers fine but
    cannot be read. A table created ``USING <bound name>`` reads and inserts into its location.
    Same options, same name, so registering again is idempotent.
    """
    fixed = {str(key).lower(): str(value) for key, value in options.items()}
    LanceOptions.parse(fixed)
    digest = hashlib.sha256(json.dumps(sorted(fixed.items())).encode()).hexdigest()[:20]
    return type(
        f"BoundLanceDataSource_{digest}",
        (LanceDataSource,),
        {"short_name": f"lance_{digest}", "bound_options": fixed, "__module__": __name__},
    )


def register_bound_source(spark: SparkSession, options: Mapping[str, str]) -> str:
    """Register ``bound_source(options)`` in ``spark`` and return the name to use in ``USING``."""
    source = bound_source(options)
    spark.dataSource.register(source)
    return source.short_name
