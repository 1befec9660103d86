"""Vector columns: Spark arrays written as Lance fixed-size lists of float32.

Spark has no fixed-size array type, so an embedding column is an `array<float>` or
`array<double>` to Spark, and Lance would store it as a variable-length list that no vector index
or search accepts. A column a vector index names is therefore written as
`fixed_size_list<float32, N>`: N is read from the data (the first non-null row; one small Spark
job) or, when the run adds rows to an existing table, is the table's own N. Every row is checked
in the same Spark job that writes it: a row whose vector has another length fails the build,
naming the row's key, before anything is committed. The size travels to the writer as the Spark
field metadata the `lance` data source already reads (`spark.types.FIXED_SIZE_METADATA`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from dbt.adapters.lancens.embeddings.functions import FIELD_METADATA_KEY as EMBEDDING_METADATA
from dbt.adapters.lancens.spark.column_names import ColumnMap, column_names
from dbt.adapters.lancens.spark.types import FIXED_SIZE_METADATA
from dbt.adapters.lancens.text.quoting import quote

VECTOR_ELEMENT = T.ArrayType(T.FloatType(), True)


class VectorColumnError(ValueError):
    """A vector column that cannot be written as fixed-size float32 vectors."""


def existing_sizes(schema: pa.Schema | None) -> ColumnMap[int]:
    """The sizes of a table's fixed-size list columns."""
    fields = schema or pa.schema([])
    return ColumnMap((f.name, f.type.list_size) for f in fields if pa.types.is_fixed_size_list(f.type))


def prepare_vectors(
    frame: DataFrame,
    columns: Sequence[str],
    key: Sequence[str],
    table_sizes: Mapping[str, int] | None = None,
    sample: Callable[[], DataFrame] | None = None,
    replaced_sizes: Callable[[], Mapping[str, int]] | None = None,
) -> DataFrame:
    """`frame` with each vector column cast to `array<float>`, its size in the field metadata, and
    a check that fails any row of another size, naming it by its `key` columns.

    `table_sizes`: the sizes of the table the rows are added to (an incremental run); a column
    keeps its size there, so new rows of another size fail instead of changing the table.
    `replaced_sizes`: the sizes of the table the rows replace, for a column with no non-NULL vector
    to take its size from (`--empty`, an empty result). `sample`: the same rows as another frame,
    for the size query. A frame with Lance filter
    pushdown must run one query only: the size query's `IS NOT NULL` would be pushed into the
    relation's reader, which PySpark then reuses for the write (rows with NULL vectors were lost)."""
    if not columns:
        return frame
    fields = ColumnMap((field.name, field) for field in frame.schema.fields)
    wanted = column_names(columns)
    for name in sorted(wanted):
        _check_type(fields.get(name), name, list(fields))
    key_columns = [fields[k].name for k in key if k in fields] or _default_key(fields, wanted)
    rows = sample or (lambda: frame)
    # a column the `embeddings` config computes has its function's size (the model never had it)
    computed = ColumnMap(
        (field.name, int(field.metadata[FIXED_SIZE_METADATA]))
        for field in frame.schema.fields
        if EMBEDDING_METADATA in (field.metadata or {})
    )

    def size(name: str) -> int:
        found = (table_sizes or {}).get(name) or computed.get(name)
        found = found or _size_from_data(rows(), fields[name].name)
        if found is None and replaced_sizes is not None:
            found = ColumnMap(replaced_sizes().items()).get(name)
        return _sized(name, found)

    sizes = ColumnMap((name, size(name)) for name in wanted)
    projection = []
    for field in frame.schema.fields:
        if field.name not in wanted:
            projection.append(F.col(quote(field.name)))
        else:
            projection.append(_checked_vector(field, sizes[field.name], key_columns))
    return frame.select(*projection)


def _sized(name: str, size: int | None) -> int:
    """A vector column's size; a column without one cannot become a vector, and left a variable-length
    list its index would fail only after the rows were committed."""
    if size is None:
        raise VectorColumnError(
            f"vector column {name!r} has no non-NULL vector to take its size (the dimension) from "
            "(every row is NULL, or there are no rows); a vector index needs it"
        )
    return size


def arrow_vectors(rows: pa.Table, columns: Sequence[str]) -> pa.Table:
    """`rows` (a seed's, read by Arrow) with each vector column as `fixed_size_list<float32, N>`, N
    from the first non-null vector, as `prepare_vectors` does for a Spark frame; a row of another
    size fails naming it by the first non-vector column, before anything is written."""
    wanted = column_names(columns)
    names = column_names(rows.column_names)
    key = _default_key(names, wanted)
    for name in sorted(wanted):
        if name not in names:
            raise VectorColumnError(
                f"vector column {name!r} (named by a vector index) is not in the seed "
                f"(its columns: {', '.join(rows.column_names)})"
            )
        index = rows.schema.get_field_index(names[name])
        rows = rows.set_column(index, *_fixed_size(rows, index, key))
    return rows


def _fixed_size(rows: pa.Table, index: int, key: Sequence[str]) -> tuple[pa.Field, pa.ChunkedArray]:
    field, column = rows.schema.field(index), rows.column(index)
    if not (pa.types.is_list(field.type) and pa.types.is_floating(field.type.value_type)):
        raise VectorColumnError(
            f"vector column {field.name!r} must be array<float> or array<double> (declare it in the "
            f"seed's column_types), got {field.type}"
        )
    lengths = pc.list_value_length(column).to_pylist()
    size = _sized(field.name, next((length for length in lengths if length is not None), None))
    for row, length in enumerate(lengths):
        if length not in (None, size):
            named = ", ".join(str(rows.column(k)[row].as_py()) for k in key)
            raise VectorColumnError(
                f"vector column {field.name!r} holds {size} values per row, but row "
                f"{', '.join(key) or '(no key)'} = ({named}) has {length}; every vector of a column "
                "must have the same length"
            )
    kind = pa.list_(pa.field("item", pa.float32()), size)
    return field.with_type(kind), column.cast(pa.list_(pa.float32())).cast(kind)


def _check_type(field: T.StructField | None, name: str, names: list[str]) -> None:
    if field is None:
        raise VectorColumnError(
            f"vector column {name!r} (named by a vector index) is not in the model's result "
            f"(its columns: {', '.join(names)})"
        )
    kind = field.dataType
    if not (isinstance(kind, T.ArrayType) and isinstance(kind.elementType, T.FloatType | T.DoubleType)):
        raise VectorColumnError(
            f"vector column {field.name!r} must be array<float> or array<double>, got {kind.simpleString()}"
        )


def _default_key(fields: Mapping[str, object], vectors: Mapping[str, str]) -> list[str]:
    """Without a `unique_key`, a ragged row is named by the model's first non-vector column."""
    return [name for name in fields if name not in vectors][:1]


def _size_from_data(frame: DataFrame, name: str) -> int | None:
    """The length of the first non-null vector (None when every row is null or there are none)."""
    column = F.col(quote(name))
    rows = frame.where(column.isNotNull()).select(F.size(column).alias("n")).limit(1).collect()
    return int(rows[0]["n"]) if rows else None


def _checked_vector(field: T.StructField, size: int, key: Sequence[str]) -> Column:
    """The column cast to `array<float>`, a row of another size failing; its field metadata kept."""
    name = field.name
    column = F.col(quote(name))
    described = [F.lit(f"row {', '.join(key) or '(no key)'} = (")]
    for position, key_name in enumerate(key):
        if position:
            described.append(F.lit(", "))
        described.append(F.coalesce(F.col(quote(key_name)).cast("string"), F.lit("null")))
    message = F.concat(
        F.lit(f"vector column {name!r} holds {size} values per row, but "),
        *described,
        F.lit(") has "),
        F.size(column).cast("string"),
        F.lit("; every vector of a column must have the same length"),
    )
    checked = F.when(
        column.isNull() | (F.size(column) == F.lit(size)), column.cast(VECTOR_ELEMENT)
    ).otherwise(F.raise_error(message))
    return checked.alias(name, metadata={**(field.metadata or {}), FIXED_SIZE_METADATA: size})
