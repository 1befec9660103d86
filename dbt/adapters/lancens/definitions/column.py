"""Columns: Spark's type names, exactly as `describe` prints them."""

from __future__ import annotations

from dataclasses import dataclass

from dbt.adapters.spark.column import SparkColumn

_INTEGERS = ("tinyint", "smallint", "int", "integer", "bigint", "byte", "short", "long")
_FLOATS = ("float", "real", "double")


@dataclass
class LancensColumn(SparkColumn):
    """dbt-spark's column, whose `dtype` is a Spark `simpleString()` type name.

    dbt's type predicates (`is_string`, `is_integer`, ...) know Postgres names (`text`, `integer`);
    these know Spark's, which is what a Lance column reports (`string`, `int`, `decimal(10,2)`)."""

    def is_string(self) -> bool:
        name = self.dtype.lower()
        return name == "string" or name.startswith(("varchar", "char")) or super().is_string()

    def is_integer(self) -> bool:
        return self.dtype.lower() in _INTEGERS

    def is_float(self) -> bool:
        return self.dtype.lower() in _FLOATS

    def is_numeric(self) -> bool:
        return self.dtype.lower().startswith(("decimal", "numeric"))
