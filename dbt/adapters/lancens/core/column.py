"""Columns: Spark's type names, exactly as `describe` prints them."""

from __future__ import annotations

from dataclasses import dataclass

from dbt.adapters.spark.column import SparkColumn


@dataclass
class LancensColumn(SparkColumn):
    """dbt-spark's column, whose `dtype` is a Spark `simpleString()` type name."""
