"""Type mapping between Lance (Arrow) schemas and Spark schemas, both ways.

Reading: every Arrow type Lance stores maps to the Spark type that holds all its values (unsigned
integers widen, ``uint64`` becomes ``decimal(20,0)``, large/view strings become ``string``,
``fixed_size_list`` becomes ``array``). Spark's Python data source protocol then demands batches
whose Arrow schema is exactly ``to_arrow_schema(spark_schema)``, so batches are cast to it.

Writing: Spark hands Arrow batches typed from the DataFrame. They are cast to the Lance schema of
the table: an existing table's own types win (an ``array<float>`` column stays
``fixed_size_list<float32, N>``), and on the first write ``fixed_size_list.<column>=<N>`` asks for a
fixed-size list (embedding vectors) where Spark can only say ``array``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

import pyarrow as pa
import pyarrow.types as pat
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from dbt.adapters.lancens.spark.column_names import ColumnMap, column_names

_INTEGERS: dict[pa.DataType, T.DataType] = {
    pa.int8(): T.ByteType(),
    pa.int16(): T.ShortType(),
    pa.int32(): T.IntegerType(),
    pa.int64(): T.LongType(),
    pa.uint8(): T.ShortType(),
    pa.uint16(): T.IntegerType(),
    pa.uint32(): T.LongType(),
    pa.uint64(): T.DecimalType(20, 0),
}
_MAX_SPARK_DECIMAL_PRECISION = 38


def to_spark_type(arrow_type: pa.DataType) -> T.DataType:
    """The Spark type that can hold every value of ``arrow_type`` (raises TypeError if none can)."""
    if arrow_type in _INTEGERS:
        return _INTEGERS[arrow_type]
    if pat.is_boolean(arrow_type):
        return T.BooleanType()
    if pat.is_float16(arrow_type) or pat.is_float32(arrow_type):
        return T.FloatType()
    if pat.is_float64(arrow_type):
        return T.DoubleType()
    if pat.is_decimal(arrow_type):
        if arrow_type.precision > _MAX_SPARK_DECIMAL_PRECISION:
            raise TypeError(f"{arrow_type} has more digits than Spark's decimal(38) can hold")
        return T.DecimalType(arrow_type.precision, arrow_type.scale)
    if pat.is_string(arrow_type) or pat.is_large_string(arrow_type) or pat.is_string_view(arrow_type):
        return T.StringType()
    if (
        pat.is_binary(arrow_type)
        or pat.is_large_binary(arrow_type)
        or pat.is_binary_view(arrow_type)
        or pat.is_fixed_size_binary(arrow_type)
    ):
        return T.BinaryType()
    if pat.is_date(arrow_type):
        return T.DateType()
    if pat.is_timestamp(arrow_type):
        return T.TimestampType() if arrow_type.tz is not None else T.TimestampNTZType()
    if pat.is_time(arrow_type):
        return T.TimeType()
    if pat.is_null(arrow_type):
        return T.NullType()
    if pat.is_dictionary(arrow_type):
        return to_spark_type(arrow_type.value_type)
    if pat.is_struct(arrow_type):
        return T.StructType([to_spark_field(arrow_type.field(i)) for i in range(arrow_type.num_fields)])
    if pat.is_map(arrow_type):
        return T.MapType(
            to_spark_type(arrow_type.key_type),
            to_spark_type(arrow_type.item_type),
            valueContainsNull=arrow_type.item_field.nullable,
        )
    if (
        pat.is_list(arrow_type)
        or pat.is_large_list(arrow_type)
        or pat.is_fixed_size_list(arrow_type)
        or pat.is_list_view(arrow_type)
        or pat.is_large_list_view(arrow_type)
    ):
        return T.ArrayType(to_spark_type(arrow_type.value_type), arrow_type.value_field.nullable)
    raise TypeError(f"Lance/Arrow type {arrow_type} has no Spark equivalent")


FIXED_SIZE_METADATA = "lance.fixed_size_list"


def to_spark_field(field: pa.Field) -> T.StructField:
    """One Arrow field as a Spark field (nullability kept).

    A top-level fixed-size list remembers its size in the field metadata, which Spark carries
    through projections, so ``CREATE TABLE new AS SELECT vec FROM lance_table`` stays fixed-size.
    """
    metadata = {FIXED_SIZE_METADATA: field.type.list_size} if pat.is_fixed_size_list(field.type) else None
    return T.StructField(field.name, to_spark_type(field.type), field.nullable, metadata)


def fixed_sizes_from_metadata(schema: T.StructType) -> dict[str, int]:
    """The fixed-size list sizes that a Spark schema read from Lance carries in its metadata."""
    return {
        field.name: int(field.metadata[FIXED_SIZE_METADATA])
        for field in schema.fields
        if FIXED_SIZE_METADATA in (field.metadata or {})
    }


def to_spark_schema(schema: pa.Schema) -> T.StructType:
    """A Lance dataset schema as the Spark schema the data source reports."""
    return T.StructType([to_spark_field(field) for field in schema])


def spark_arrow_schema(schema: T.StructType) -> pa.Schema:
    """The exact Arrow schema Spark's data source protocol expects batches in."""
    return to_arrow_schema(schema, timezone="UTC")


def conform(batch: pa.RecordBatch, schema: pa.Schema, mismatch_hint: str = "") -> pa.RecordBatch:
    """``batch`` with its columns picked by name (case-insensitively) and cast to ``schema``.

    The casts of columns without dates or timestamps are safe (a value the target type cannot hold
    fails, naming the column, with ``mismatch_hint`` appended). A reader's schema is Spark's planned
    one: if another writer changed a column's type since, reading must fail rather than truncate (a
    double 1.7 read as a bigint 1). A top-level `date64` is floored to its day. Other casts that
    involve a timestamp or a date, alone or inside a struct or list, are unchecked as before: a
    timestamp loses its nanoseconds to Spark's microseconds (and a microsecond value past 2262
    overflows a nanosecond column it is written into).
    """
    if batch.schema.equals(schema) and not any(_has_decimal(field.type) for field in schema):
        return batch  # the common case on both paths: nothing to pick, cast or realign
    by_name = column_names(batch.schema.names)
    missing = [field.name for field in schema if field.name not in by_name]
    if missing:
        raise ValueError(f"columns {missing} of the Lance schema are missing from the data")
    columns = [_cast(aligned(batch.column(by_name[field.name])), field, mismatch_hint) for field in schema]
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def _cast(column: pa.Array, field: pa.Field, mismatch_hint: str) -> pa.Array:
    if column.type.equals(field.type):
        return column
    try:
        if pat.is_date64(column.type) and pat.is_date32(field.type):
            # to the day the instant falls on: a plain cast rounds a time of day before 1970 up
            return column.cast(pa.int64()).cast(pa.timestamp("ms")).cast(pa.date32())
        return column.cast(field.type, safe=not _has_time(field.type) and not _has_time(column.type))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise ValueError(
            f"column {field.name!r}: values of type {column.type} do not fit its type {field.type} "
            f"({exc}){mismatch_hint}"
        ) from exc


def _has_time(kind: pa.DataType) -> bool:
    """Whether a type is, or holds, a timestamp or a date (whose casts drop sub-units)."""
    if pat.is_timestamp(kind) or pat.is_date(kind):
        return True
    if pat.is_dictionary(kind):
        return _has_time(kind.value_type)
    return any(_has_time(kind.field(i).type) for i in range(kind.num_fields))


def _has_decimal(kind: pa.DataType) -> bool:
    if pa.types.is_decimal(kind):
        return True
    return any(_has_decimal(kind.field(i).type) for i in range(kind.num_fields))


def aligned(column: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """A copy of a decimal-bearing column in freshly allocated buffers; other columns untouched.

    Spark's Arrow output can place 16-byte decimal values at 8-byte offsets; Lance's Rust side
    (write_fragments, merge-insert) rejects such buffers ("Memory pointer ... is not aligned") and
    panics. Concatenation copies into buffers Arrow allocates, which are 64-byte aligned.
    """
    if not _has_decimal(column.type):
        return column
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    copy = pa.concat_arrays([*chunks, pa.array([], type=column.type)])
    return pa.chunked_array([copy]) if isinstance(column, pa.ChunkedArray) else copy


def _write_type(incoming: pa.DataType, existing: pa.DataType | None, fixed_size: int | None) -> pa.DataType:
    """The Lance type one written column gets (nested values nullable: `nullable_within`): a
    requested fixed size wins over the previous type (a variable-length list becomes a vector when a
    rebuild asks for one)."""
    if (
        existing is not None
        and to_spark_type(existing).simpleString() == to_spark_type(incoming).simpleString()
    ):
        if fixed_size is None or (pat.is_fixed_size_list(existing) and existing.list_size == fixed_size):
            return nullable_within(existing)
    if fixed_size is not None:
        if not (pat.is_list(incoming) or pat.is_large_list(incoming) or pat.is_fixed_size_list(incoming)):
            raise TypeError(f"fixed_size_list requested for a column of type {incoming}")
        return nullable_within(pa.list_(incoming.value_field.with_name("item"), fixed_size))
    return nullable_within(incoming)


def nullable_within(kind: pa.DataType) -> pa.DataType:
    """`kind` with every nested value nullable: struct fields, list elements, map values (a map key
    never is), as Spark's `asNullable` makes them and Delta Lake stores them.

    Spark infers `array(1, 2)` as an array without NULL elements and `named_struct('a', 1)` as a
    struct whose field cannot be NULL; stored so, a later write of `array(1, NULL)` could never land."""
    if pat.is_struct(kind):
        return pa.struct([_nullable_field(kind.field(i)) for i in range(kind.num_fields)])
    if pat.is_map(kind):
        return pa.map_(kind.key_field, _nullable_field(kind.item_field), kind.keys_sorted)
    if pat.is_fixed_size_list(kind):
        return pa.list_(_nullable_field(kind.value_field), kind.list_size)
    if pat.is_large_list(kind):
        return pa.large_list(_nullable_field(kind.value_field))
    if pat.is_list(kind):
        return pa.list_(_nullable_field(kind.value_field))
    return kind


def _nullable_field(field: pa.Field) -> pa.Field:
    return field.with_type(nullable_within(field.type)).with_nullable(True)


def refuse_unreadable_names(fields: Iterable[pa.Field], top_level: bool = True) -> None:
    """Fail, naming them, on column names Lance cannot hold: a top-level name with `.` (Lance
    refuses it; PySpark's mapInArrow would first misread it as a struct field), and a name with a
    backtick at any level (pylance 14 writes it, then can read no column of the table)."""
    for field in fields:
        if "`" in field.name or (top_level and "." in field.name):
            what = "a backtick" if "`" in field.name else "'.'"
            raise ValueError(
                f"column {field.name!r}: a Lance table cannot hold a column whose name contains {what}; "
                "give it another name in the query (an alias)"
            )
        if pa.types.is_struct(field.type):
            refuse_unreadable_names(field.type, top_level=False)
        elif pa.types.is_list(field.type) or pa.types.is_large_list(field.type):
            refuse_unreadable_names([field.type.value_field], top_level=False)


def lance_write_schema(
    incoming: pa.Schema,
    existing: pa.Schema | None,
    fixed_sizes: Mapping[str, int],
    append: bool,
    not_null: Collection[str] = (),
) -> pa.Schema:
    """The Lance schema a write commits: the existing one on append, else Spark's made Lance-exact.

    On overwrite a column keeps its previous Lance type whenever Spark sees both as the same type,
    so reading and overwriting a table does not silently turn vectors into variable-length lists,
    and keeps its field metadata (column comments), so a rebuild does not lose documentation.
    Top-level columns are written nullable, except those named in `not_null` (a contract's
    `not_null` constraints): Lance then refuses a null in them on every later write too. Values
    nested in a column are always nullable (`nullable_within`).
    """
    refuse_unreadable_names(incoming)
    if append and existing is not None:
        known = column_names(existing.names)
        extra = sorted(name for name in incoming.names if name not in known)
        if extra:
            raise ValueError(f"cannot append columns {extra} that the Lance table does not have")
        return existing
    previous = ColumnMap((field.name, field) for field in (existing or pa.schema([])))
    sizes = ColumnMap(fixed_sizes.items())
    written = column_names(incoming.names)
    unknown = sorted(name for name in sizes if name not in written)
    if unknown:
        raise ValueError(f"fixed_size_list option names columns {unknown} that are not written")
    required = column_names(not_null)
    unknown = sorted(name for name in required if name not in written)
    if unknown:
        raise ValueError(f"not_null option names columns {unknown} that are not written")
    fields = []
    for field in incoming:
        old = previous.get(field.name)
        new_type = _write_type(field.type, old.type if old else None, sizes.get(field.name))
        # Nullable, whatever Spark inferred (as Delta Lake does): `1 AS x` is non-nullable to Spark,
        # but a later append or merge that lacks `x` must still be able to write nulls into it.
        nullable = field.name not in required
        fields.append(pa.field(field.name, new_type, nullable, metadata=old.metadata if old else None))
    return pa.schema(fields)
