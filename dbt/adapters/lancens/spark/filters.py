"""Spark data source filters translated to Lance SQL filter strings.

Spark 4's Python data source API hands ``pushFilters`` a list of conjuncts, each one of EqualTo,
EqualNullSafe, comparisons, In, IsNull/IsNotNull, StringStartsWith/EndsWith/Contains, possibly
wrapped in Not. Disjunctions (``a = 1 or b = 2``) are never offered to Python sources, so there is
no And/Or to translate; a filter that cannot be expressed exactly is left for Spark to evaluate.

Spark states a filter in the types it reads a column as, which are not always the column's Lance
(Arrow) types: a table written by another tool may hold float16, unsigned integers, timestamps in
seconds or nanoseconds or in a zone other than UTC, or date64. Lance compares a literal in the
column's own type, so a comparison is pushed only where that gives Spark's answer for every value
(`_comparable`); the rest stay with Spark.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Callable, Sequence

import pyarrow as pa
from pyspark.sql.datasource import (
    EqualNullSafe,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    StringContains,
    StringEndsWith,
    StringStartsWith,
)

from dbt.adapters.lancens.spark.column_names import ColumnMap
from dbt.adapters.lancens.text.quoting import quote_path

_COMPARISONS: dict[type[Filter], str] = {
    EqualTo: "=",
    GreaterThan: ">",
    GreaterThanOrEqual: ">=",
    LessThan: "<",
    LessThanOrEqual: "<=",
}
# Prefix and suffix around the escaped text of a string match's LIKE pattern.
_LIKE_AFFIXES: dict[type[Filter], tuple[str, str]] = {
    StringStartsWith: ("", "%"),
    StringEndsWith: ("%", ""),
    StringContains: ("%", "%"),
}


# PySpark hands a Python source a date or timestamp literal of the days the Julian calendar skipped
# (1582-10-05..14, which exist in Spark's proleptic Gregorian calendar) as 1582-10-15, so a literal
# of that day may stand for any of them: those, and every older one, are left to Spark.
_LAST_AMBIGUOUS_DAY = dt.date(1582, 10, 15)

# Time zones in which Lance reads a pushed (UTC) timestamp literal as the instant Spark means.
_UTC_ZONES = frozenset({"UTC", "Etc/UTC", "+00:00", "Z"})

# The Lance (Arrow) type of a column by its path, as Spark names it; None when there is no such column.
ColumnType = Callable[[Sequence[str]], pa.DataType | None]


class Untranslatable(Exception):
    """The filter has no exact Lance SQL equivalent; Spark keeps evaluating it."""


def column(path: Sequence[str]) -> str:
    """A (possibly nested) column reference, each level back-quoted."""
    return quote_path(path)


def _string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def literal(value: object) -> str:
    """A Python value from Spark as a Lance (DataFusion) SQL literal."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, decimal.Decimal):
        # Lance parses `0.50` as a Float64 literal and refuses to compare it with Decimal128 columns.
        raise Untranslatable("Lance cannot compare decimal columns with numeric literals")
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            raise Untranslatable("NaN and infinities have no Lance SQL literal that Spark's semantics match")
        if value == -(2**63):
            raise Untranslatable("Lance reads the smallest 64-bit integer literal as a float")
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    day = value.date() if isinstance(value, dt.datetime) else value
    if isinstance(day, dt.date) and day <= _LAST_AMBIGUOUS_DAY:
        raise Untranslatable("dates up to the Gregorian calendar's first day are compared by Spark")
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return f"TIMESTAMP {_string(value.isoformat(sep=' '))}"
    if isinstance(value, dt.date):
        return f"DATE {_string(value.isoformat())}"
    raise Untranslatable(f"no Lance literal for {type(value).__name__}")


def _like_pattern(spark_filter: StringStartsWith | StringEndsWith | StringContains) -> str:
    prefix, suffix = _LIKE_AFFIXES[type(spark_filter)]
    escaped = spark_filter.value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return _string(prefix + escaped + suffix)


def _comparable(column_type: pa.DataType | None, values: Sequence[object]) -> None:
    """Raise Untranslatable unless Lance compares `values` with a column of `column_type` as Spark
    does (float ranges once `_ordered` has rewritten them)."""
    if column_type is None:
        raise Untranslatable("no such column in the Lance table")
    if pa.types.is_dictionary(column_type):
        column_type = column_type.value_type
    if pa.types.is_float16(column_type):
        raise Untranslatable("Lance rounds the literal to float16; Spark compares as float32")
    if pa.types.is_integer(column_type):
        # Spark reads an unsigned column as the next wider signed type, so its literal may not fit.
        low, high = _integer_range(column_type)
        if any(not isinstance(v, int) or isinstance(v, bool) or not low <= v <= high for v in values):
            raise Untranslatable(f"a literal out of the range of the column's {column_type}")
    if pa.types.is_timestamp(column_type) and (
        column_type.unit != "us" or column_type.tz not in (None, *_UTC_ZONES)
    ):
        # Lance casts the literal to the column's unit (truncating) and reads it in the column's zone.
        raise Untranslatable(f"Lance compares {column_type} with the literal in its own unit and zone")
    if pa.types.is_date64(column_type):
        raise Untranslatable("a date64 value may hold a time of day, which Spark drops when reading it")


def _ordered(name: str, operator: str, value: str, column_type: pa.DataType | None) -> str:
    """`name <operator> value` as Lance SQL. Spark orders every NaN after every number; Lance orders
    a NaN with its sign bit set (what `inf - inf` gives in numpy) before them, so on a float
    column NaN is added to `>`/`>=` and taken out of `<`/`<=` explicitly."""
    comparison = f"{name} {operator} {value}"
    if column_type is None or not pa.types.is_floating(
        column_type.value_type if pa.types.is_dictionary(column_type) else column_type
    ):
        return comparison
    if operator.startswith(">"):
        return f"({comparison} OR isnan({name}))"
    return f"({comparison} AND NOT isnan({name}))"


def _integer_range(integer_type: pa.DataType) -> tuple[int, int]:
    bits = integer_type.bit_width
    if pa.types.is_unsigned_integer(integer_type):
        return 0, 2**bits - 1
    return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1


def to_lance(spark_filter: Filter, column_type: ColumnType) -> str:
    """One Spark filter as Lance SQL, or raise Untranslatable. `column_type`: each column's Lance type."""
    match spark_filter:
        case EqualTo() | GreaterThan() | GreaterThanOrEqual() | LessThan() | LessThanOrEqual():
            operator = _COMPARISONS[type(spark_filter)]
            kind = column_type(spark_filter.attribute)
            _comparable(kind, [spark_filter.value])
            name, value = column(spark_filter.attribute), literal(spark_filter.value)
            return _ordered(name, operator, value, kind) if operator != "=" else f"{name} = {value}"
        case EqualNullSafe(value=None):
            return f"{column(spark_filter.attribute)} IS NULL"
        case EqualNullSafe():
            _comparable(column_type(spark_filter.attribute), [spark_filter.value])
            name = column(spark_filter.attribute)
            return f"{name} IS NOT NULL AND {name} = {literal(spark_filter.value)}"
        case In():
            values = [v for v in spark_filter.value if v is not None]
            if not values or len(values) != len(spark_filter.value):
                raise Untranslatable("IN with NULL has three-valued semantics; leave it to Spark")
            _comparable(column_type(spark_filter.attribute), values)
            return f"{column(spark_filter.attribute)} IN ({', '.join(literal(v) for v in values)})"
        case IsNull():
            return f"{column(spark_filter.attribute)} IS NULL"
        case IsNotNull():
            return f"{column(spark_filter.attribute)} IS NOT NULL"
        case StringStartsWith() | StringEndsWith() | StringContains():
            return f"{column(spark_filter.attribute)} LIKE {_like_pattern(spark_filter)}"
        case Not():
            return f"NOT ({to_lance(spark_filter.child, column_type)})"
    raise Untranslatable(f"unsupported filter {type(spark_filter).__name__}")


def arrow_column_type(schema: pa.Schema) -> ColumnType:
    """`ColumnType` over a Lance table's Arrow schema: each level of a path matched as Spark SQL
    resolves names (any case; an exact spelling wins), through struct fields."""

    def lookup(path: Sequence[str]) -> pa.DataType | None:
        fields: Sequence[pa.Field] = list(schema)
        found: pa.DataType | None = None
        for part in path:
            match = ColumnMap((field.name, field) for field in fields).get(part)
            if match is None:
                return None
            found = match.type
            fields = list(found) if pa.types.is_struct(found) else []
        return found

    return lookup


def conjunction(parts: Sequence[str]) -> str | None:
    """The AND of translated filters, or None when nothing was pushed."""
    return " AND ".join(f"({part})" for part in parts) if parts else None
