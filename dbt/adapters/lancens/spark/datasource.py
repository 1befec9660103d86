"""The ``lance`` PySpark data source: schema, reader and writer over a Lance table location.

Spark pickles this class into Python workers: ``schema``/``reader``/``writer`` run in planner
workers on the driver, ``read``/``write`` in executor workers, ``commit``/``abort`` in a worker of
the driver. Options are parsed on construction so a bad option fails at planning, not in a task.
"""

from __future__ import annotations

from pyspark.sql import SparkSession
from pyspark.sql.datasource import DataSource
from pyspark.sql.types import StructType

from dbt.adapters.lancens.spark.dataset import open_dataset, try_open_latest
from dbt.adapters.lancens.spark.options import LanceOptions
from dbt.adapters.lancens.spark.reader import LanceReader
from dbt.adapters.lancens.spark.types import lance_write_schema, to_spark_schema
from dbt.adapters.lancens.spark.writer import LanceWriter


class LanceDataSource(DataSource):
    """``spark.read.format("lance").load(uri)`` and ``df.write.format("lance").save(uri)``."""

    @classmethod
    def name(cls) -> str:
        return "lance"

    @property
    def lance_options(self) -> LanceOptions:
        return LanceOptions.parse(self.options)

    def schema(self) -> StructType:
        """The table's schema at the requested version (only ``columns`` if that option is set)."""
        options = self.lance_options
        spark_schema = to_spark_schema(open_dataset(options).schema)
        if not options.columns:
            return spark_schema
        wanted = {name.lower() for name in options.columns}
        unknown = wanted - {field.name.lower() for field in spark_schema.fields}
        if unknown:
            raise ValueError(f"option columns names {sorted(unknown)} not in the table")
        return StructType([field for field in spark_schema.fields if field.name.lower() in wanted])

    def reader(self, schema: StructType) -> LanceReader:
        return LanceReader(self.lance_options, schema)

    def writer(self, schema: StructType, overwrite: bool) -> LanceWriter:
        """Plan a write: pin the read version and settle the Lance schema before any task runs."""
        from dbt.adapters.lancens.spark.types import spark_arrow_schema

        options = self.lance_options
        existing = try_open_latest(options)
        target = lance_write_schema(
            spark_arrow_schema(schema),
            existing.schema if existing is not None else None,
            options.fixed_sizes,
            append=not overwrite,
        )
        return LanceWriter(
            options,
            target,
            overwrite=overwrite,
            read_version=existing.version if existing is not None else None,
            storage_version=existing.data_storage_version if existing is not None else None,
        )


def register_data_source(spark: SparkSession) -> None:
    """Make ``format("lance")`` / ``USING lance`` resolve in ``spark`` (safe to call repeatedly)."""
    spark.dataSource.register(LanceDataSource)
