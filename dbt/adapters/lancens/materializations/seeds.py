"""Seeds: CSV to Lance through Arrow, never through SQL `INSERT ... VALUES`.

pyarrow's CSV reader handles quotes, delimiters and newlines inside quoted fields. NULL is what it
is in dbt-core's seed loader (agate, so in dbt-spark and dbt-duckdb too) in its usual spellings: an
empty field, quoted or not, and `null`, `NULL`, `Null`, in every column, declared ones included
(agate also ignores case and surrounding spaces, `nUlL` or ` null `; those stay text here). A column
of times of day is text, as agate has no time type, unless `column_types` declares it.
`column_types` are Spark SQL type names, as in any dbt-spark project (`timestamp`, `decimal(10,2)`,
`array<float>`, ...). Text is read as Spark's CAST reads it: a `timestamp` without a zone offset is
in the session time zone (`spark.sql.session.timeZone`, UTC unless the profile sets another), a
`date` may carry a time of day; an `array`, `map` or `struct` cell is JSON. The whole file is
parsed before anything is written, so a malformed file fails naming itself and leaves the table at
its current version.
"""

from __future__ import annotations

import csv
import json
import re
from datetime import UTC, timedelta, timezone, tzinfo
from typing import NamedTuple
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import agate
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
from dbt.adapters.contracts.connection import AdapterResponse
from dbt_common.clients.agate_helper import table_from_data_flat
from dbt_common.exceptions import CompilationError
from pyspark.sql import SparkSession
from pyspark.sql.pandas.types import to_arrow_type
from pyspark.sql.types import DataType

_UNQUOTED_NAME = re.compile(r"^[A-Za-z0-9_]+$")
_ZONE_OFFSET = re.compile(r"^(?:UTC|GMT|UT)?([+-])(\d{1,2})(?::?(\d{2}))?(?::?(\d{2}))?$")


def check_delimiter(delimiter: str) -> None:
    """A seed's `delimiter` config is one character (a config mistake, caught before reading)."""
    if len(delimiter) != 1:
        raise CompilationError(f"seed config `delimiter` must be exactly one character, got {delimiter!r}")


def check_unquoted_names(path: str, names: list[str]) -> None:
    """With `quote_columns: false` every column name must be a plain SQL identifier.

    Such a name is written into SQL unquoted, so a header like `id|name` (most often a wrong
    `delimiter`) is a syntax error: say so before anything is written."""
    bad = [name for name in names if not _UNQUOTED_NAME.match(name)]
    if bad:
        raise ValueError(
            f"Syntax error in seed {path}: with quote_columns: false, column names must be plain SQL "
            f"identifiers (letters, digits, underscores), got {bad}; check the seed's delimiter or "
            "set quote_columns: true"
        )


def read_seed_csv(
    spark: SparkSession,
    path: str,
    column_types: dict[str, str] | None = None,
    delimiter: str = ",",
    quote_columns: bool | None = None,
) -> pa.Table:
    """Parse the seed file into an Arrow table whose types Spark reads back as dbt-spark would."""
    check_delimiter(delimiter)
    zone = _session_zone(spark)
    declared = {name: _arrow_type(spark, name, type_name) for name, type_name in (column_types or {}).items()}
    parse_types = {name: _csv_type(kind) for name, kind in declared.items()}
    try:
        table = _read(path, delimiter, parse_types)
        times = {
            f.name: pa.string() for f in table.schema if pa.types.is_time(f.type) and f.name not in declared
        }
        if times:  # pyarrow inferred a time of day: read those columns again as text
            table = _read(path, delimiter, {**parse_types, **times})
    except OSError as exc:
        raise ValueError(f"Could not load seed file {path}: {exc}") from exc
    except pa.ArrowInvalid as exc:
        header = _header_only(path, delimiter)
        if header is None:
            raise ValueError(f"Could not load seed file {path}: {exc}") from exc
        # pyarrow cannot infer a column count without a data row; dbt makes an empty table.
        table = pa.table({name: pa.array([], declared.get(name, pa.string())) for name in header})
    if quote_columns is False:
        check_unquoted_names(path, table.column_names)
    unknown = sorted(set(declared) - set(table.column_names))
    if unknown:
        raise ValueError(f"Seed {path}: column_types names columns the file does not have: {unknown}")
    for name, kind in declared.items():
        if parse_types[name] != kind:
            index = table.column_names.index(name)
            table = table.set_column(index, name, _convert(path, name, table.column(name), kind, zone))
    return _spark_friendly(table, set(declared), zone)


NULL_SPELLINGS = ["", "null", "NULL", "Null"]
"""agate's null values (`""`, `null`) in their usual spellings; agate compares any case, stripped."""


def _read(path: str, delimiter: str, column_types: dict[str, pa.DataType]) -> pa.Table:
    return pacsv.read_csv(
        path,
        parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True),
        convert_options=pacsv.ConvertOptions(
            column_types=column_types,
            null_values=NULL_SPELLINGS,
            strings_can_be_null=True,
            quoted_strings_can_be_null=True,
        ),
    )


def _csv_type(kind: pa.DataType) -> pa.DataType:
    """The type pyarrow's CSV reader parses a declared column as; `_convert` finishes the others.

    pyarrow refuses a date-time in a date column (Spark's CAST keeps the day), naive text in a
    zoned timestamp column (Spark reads it in the session time zone), and nested types."""
    if pa.types.is_date32(kind):
        return pa.timestamp("s")
    if pa.types.is_timestamp(kind) and kind.tz is not None:
        return pa.string()
    if pa.types.is_nested(kind):
        return pa.string()
    return kind


def _session_zone(spark: SparkSession) -> tzinfo:
    """The session time zone Spark's CAST reads zone-less timestamp text in: a region (`Europe/Paris`)
    or an offset (`+02:00`, `UTC+2`), as Spark accepts them."""
    name = spark.conf.get("spark.sql.session.timeZone") or "UTC"
    if name in ("Z", "UTC", "GMT", "UT"):
        return UTC
    offset = _ZONE_OFFSET.match(name)
    if offset:
        sign, hours, minutes, seconds = offset.groups()
        delta = timedelta(hours=int(hours), minutes=int(minutes or 0), seconds=int(seconds or 0))
        return timezone(-delta if sign == "-" else delta)
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"spark.sql.session.timeZone {name!r} is not a time zone Python knows") from exc


def _in_zone(column: pa.ChunkedArray, zone: tzinfo) -> pa.ChunkedArray:
    """Zone-less timestamps read as wall-clock times in `zone`, as instants (microseconds, UTC).

    Python's default `fold=0` resolves a wall-clock time as Java's `ZonedDateTime.of`, so as Spark's
    CAST: an ambiguous time (clocks set back) takes the earlier offset, a time in a gap (clocks set
    forward) the offset before the gap, i.e. it moves forward by the gap. The offsets are applied
    to naive values: pyarrow ignores a datetime's zone when `PYARROW_IGNORE_TIMEZONE` is set, which
    importing `pyspark.pandas` does."""
    instants = pa.timestamp("us", tz="UTC")
    micros = column.cast(pa.timestamp("us"))
    if zone is UTC:
        return micros.cast(instants)
    utc = [None if value is None else value - zone.utcoffset(value) for value in micros.to_pylist()]
    return pa.chunked_array([pa.array(utc, type=pa.timestamp("us"))]).cast(instants)


def _convert(
    path: str, name: str, column: pa.ChunkedArray, kind: pa.DataType, zone: tzinfo
) -> pa.ChunkedArray:
    """A column parsed as `_csv_type(kind)`, converted to `kind`; a bad value fails naming it."""
    try:
        if pa.types.is_date32(kind):
            return column.cast(pa.date32(), safe=False)
        if pa.types.is_timestamp(kind):
            try:  # every value carries a zone offset
                return pc.cast(column, kind)
            except pa.ArrowInvalid:  # naive text: a wall-clock time in the session time zone
                return _in_zone(pc.cast(column, pa.timestamp(kind.unit)), zone).cast(kind)
        values = [None if text is None else json.loads(text) for text in column.to_pylist()]
        return pa.chunked_array([pa.array(values, type=kind)])
    except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError, TypeError) as exc:
        what = "JSON" if pa.types.is_nested(kind) else str(kind)
        raise ValueError(f"Seed {path}: column {name!r} has a value that is not {what}: {exc}") from exc


def _header_only(path: str, delimiter: str) -> list[str] | None:
    """The column names of a file that holds a header and no rows, else None."""
    with open(path, newline="", encoding="utf-8-sig") as handle:
        rows = [row for row in csv.reader(handle, delimiter=delimiter) if row]
    return rows[0] if len(rows) == 1 else None


def _arrow_type(spark: SparkSession, column: str, type_name: str) -> pa.DataType:
    try:
        # A Spark `timestamp` is an instant; it is stored in UTC, the session time zone.
        return to_arrow_type(DataType.fromDDL(type_name), timezone="UTC")
    except Exception as exc:
        raise ValueError(
            f"column_types: {type_name!r} for column {column!r} is not a Spark SQL type"
        ) from exc


def _spark_friendly(table: pa.Table, declared: set[str], zone: tzinfo) -> pa.Table:
    """Inferred timestamps become Spark `timestamp` (UTC, microseconds; zone-less text read in the
    session time zone, as dbt-spark's seed INSERT has Spark read it); all-null columns become strings."""
    fields = []
    for field in table.schema:
        kind = field.type
        if field.name not in declared:
            if pa.types.is_timestamp(kind):
                if kind.tz is None:
                    index = table.schema.get_field_index(field.name)
                    table = table.set_column(index, field.name, _in_zone(table.column(index), zone))
                kind = pa.timestamp("us", tz=kind.tz or "UTC")
            elif pa.types.is_null(kind):
                kind = pa.string()
        fields.append(field.with_type(kind))
    return table.cast(pa.schema(fields))


class SeedLoad(NamedTuple):
    """What the seed materialization stores: the load's response, and its rows for `--show`."""

    response: AdapterResponse
    table: agate.Table | None


def shown_table(data: pa.Table) -> agate.Table:
    """The loaded rows as agate, for `dbt seed --show` (dbt-core prints a random sample of them).

    Built only when `--show` asks for it: the load itself never goes through agate."""
    return table_from_data_flat(data.to_pylist(), data.column_names)
