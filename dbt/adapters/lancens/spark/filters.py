"""Spark data source filters translated to Lance SQL filter strings.

Spark 4's Python data source API hands ``pushFilters`` a list of conjuncts, each one of EqualTo,
EqualNullSafe, comparisons, In, IsNull/IsNotNull, StringStartsWith/EndsWith/Contains, possibly
wrapped in Not. Disjunctions (``a = 1 or b = 2``) are never offered to Python sources, so there is
no And/Or to translate; a filter that cannot be expressed exactly is left for Spark to evaluate.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Sequence

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


class Untranslatable(Exception):
    """The filter has no exact Lance SQL equivalent; Spark keeps evaluating it."""


def column(path: Sequence[str]) -> str:
    """A (possibly nested) column reference, each level back-quoted."""
    return ".".join("`" + part.replace("`", "``") + "`" for part in path)


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
        if isinstance(value, float) and value != value:
            raise Untranslatable("NaN compares differently in Spark and SQL")
        return repr(value)
    if isinstance(value, str):
        return _string(value)
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


def to_lance(spark_filter: Filter) -> str:
    """One Spark filter as Lance SQL, or raise Untranslatable."""
    match spark_filter:
        case EqualTo() | GreaterThan() | GreaterThanOrEqual() | LessThan() | LessThanOrEqual():
            operator = _COMPARISONS[type(spark_filter)]
            return f"{column(spark_filter.attribute)} {operator} {literal(spark_filter.value)}"
        case EqualNullSafe(value=None):
            return f"{column(spark_filter.attribute)} IS NULL"
        case EqualNullSafe():
            name = column(spark_filter.attribute)
            return f"{name} IS NOT NULL AND {name} = {literal(spark_filter.value)}"
        case In():
            values = [v for v in spark_filter.value if v is not None]
            if not values or len(values) != len(spark_filter.value):
                raise Untranslatable("IN with NULL has three-valued semantics; leave it to Spark")
            return f"{column(spark_filter.attribute)} IN ({', '.join(literal(v) for v in values)})"
        case IsNull():
            return f"{column(spark_filter.attribute)} IS NULL"
        case IsNotNull():
            return f"{column(spark_filter.attribute)} IS NOT NULL"
        case StringStartsWith() | StringEndsWith() | StringContains():
            return f"{column(spark_filter.attribute)} LIKE {_like_pattern(spark_filter)}"
        case Not():
            return f"NOT ({to_lance(spark_filter.child)})"
    raise Untranslatable(f"unsupported filter {type(spark_filter).__name__}")


def conjunction(parts: Sequence[str]) -> str | None:
    """The AND of translated filters, or None when nothing was pushed."""
    return " AND ".join(f"({part})" for part in parts) if parts else None
