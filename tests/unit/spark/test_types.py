"""Every Lance/Arrow type through Spark and back, with real Lance files."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import lance
import pyarrow as pa
import pytest
from pyspark.sql import types as T

from dbt.adapters.lancens.spark.types import FIXED_SIZE_METADATA, conform, lance_write_schema, to_spark_type

UTC = dt.UTC
TS = dt.datetime(2024, 5, 6, 7, 8, 9, 123456)

LANCE_COLUMNS: dict[str, tuple[pa.Array, T.DataType]] = {
    "i8": (pa.array([-1, None], pa.int8()), T.ByteType()),
    "i16": (pa.array([-300, None], pa.int16()), T.ShortType()),
    "i32": (pa.array([-70000, None], pa.int32()), T.IntegerType()),
    "i64": (pa.array([-(2**40), None], pa.int64()), T.LongType()),
    "u8": (pa.array([255, None], pa.uint8()), T.ShortType()),
    "u32": (pa.array([2**32 - 1, None], pa.uint32()), T.LongType()),
    "u64": (pa.array([2**64 - 1, None], pa.uint64()), T.DecimalType(20, 0)),
    "f32": (pa.array([1.5, None], pa.float32()), T.FloatType()),
    "f64": (pa.array([2.25, None], pa.float64()), T.DoubleType()),
    "dec": (pa.array([Decimal("123.45"), None], pa.decimal128(10, 2)), T.DecimalType(10, 2)),
    "s": (pa.array(["x", None], pa.string()), T.StringType()),
    "ls": (pa.array(["large", None], pa.large_string()), T.StringType()),
    "b": (pa.array([b"\x00\x01", None], pa.binary()), T.BinaryType()),
    "lb": (pa.array([b"\x02", None], pa.large_binary()), T.BinaryType()),
    "flag": (pa.array([True, None], pa.bool_()), T.BooleanType()),
    "d": (pa.array([dt.date(2024, 1, 2), None], pa.date32()), T.DateType()),
    "ts_tz": (pa.array([TS.replace(tzinfo=UTC), None], pa.timestamp("us", "UTC")), T.TimestampType()),
    "ts_ntz": (pa.array([TS, None], pa.timestamp("us")), T.TimestampNTZType()),
    "ts_ns": (pa.array([TS, None], pa.timestamp("ns")), T.TimestampNTZType()),
    "st": (
        pa.array([{"a": 1, "b": "z"}, None], pa.struct([("a", pa.int32()), ("b", pa.string())])),
        T.StructType([T.StructField("a", T.IntegerType()), T.StructField("b", T.StringType())]),
    ),
    "li": (pa.array([[1, 2], None], pa.list_(pa.int64())), T.ArrayType(T.LongType())),
    "lli": (pa.array([["p"], None], pa.large_list(pa.string())), T.ArrayType(T.StringType())),
    "m": (
        pa.array([[("k", 1.0)], None], pa.map_(pa.string(), pa.float64())),
        T.MapType(T.StringType(), T.DoubleType()),
    ),
    "vec": (pa.array([[0.5, 1.5, 2.5], None], pa.list_(pa.float32(), 3)), T.ArrayType(T.FloatType())),
}


@pytest.fixture(scope="module")
def lance_typed(tmp_path_factory: pytest.TempPathFactory) -> str:
    uri = str(tmp_path_factory.mktemp("types") / "all.lance")
    lance.write_dataset(pa.table({name: array for name, (array, _) in LANCE_COLUMNS.items()}), uri)
    return uri


def test_read_maps_every_lance_type(spark, lance_typed: str) -> None:
    frame = spark.read.format("lance").load(lance_typed)
    assert {f.name: f.dataType for f in frame.schema.fields} == {
        name: spark_type for name, (_, spark_type) in LANCE_COLUMNS.items()
    }
    first, second = sorted(frame.collect(), key=lambda row: row["i8"] is None)
    assert first["u64"] == Decimal(2**64 - 1)
    assert first["ls"] == "large" and first["lb"] == b"\x02"
    assert first["ts_tz"].astimezone(UTC) == TS.replace(tzinfo=UTC)
    assert first["ts_ntz"] == TS and first["ts_ns"] == TS
    assert first["st"].asDict() == {"a": 1, "b": "z"}
    assert first["m"] == {"k": 1.0} and first["vec"] == [0.5, 1.5, 2.5]
    assert all(value is None for value in second.asDict().values())


def test_lance_types_survive_read_then_overwrite(spark, lance_typed: str, table_uri: str) -> None:
    """Spark reads a table and writes it back: each column keeps its exact Lance type."""
    spark.read.format("lance").load(lance_typed).write.format("lance").mode("overwrite").save(table_uri)
    copy = lance.dataset(table_uri)
    original = lance.dataset(lance_typed)
    assert copy.count_rows() == 2
    assert copy.schema.field("vec").type == original.schema.field("vec").type
    written = copy.to_table().sort_by("i8")
    assert written.column("vec").to_pylist()[0] == [0.5, 1.5, 2.5]
    assert written.column("u64").to_pylist()[0] == Decimal(2**64 - 1)


def test_spark_types_round_trip(spark, table_uri: str) -> None:
    frame = spark.sql(
        """SELECT CAST(1 AS TINYINT) AS b, CAST(2 AS SMALLINT) AS s, 3 AS i, 4L AS l, 1.5F AS f,
                  2.5D AS d, CAST('9.99' AS DECIMAL(5,2)) AS dec, 'txt' AS str, X'CAFE' AS bin,
                  TRUE AS flag, DATE'2024-02-29' AS day,
                  TIMESTAMP'2024-02-29 10:11:12.345678' AS ts,
                  TIMESTAMP_NTZ'2024-02-29 10:11:12.345678' AS ntz,
                  named_struct('x', 1, 'y', array('a', 'b')) AS nested,
                  map('k', 1) AS kv, array(1.0F, 2.0F) AS floats"""
    )
    frame.write.format("lance").mode("append").save(table_uri)
    schema = lance.dataset(table_uri).schema
    assert schema.field("ts").type == pa.timestamp("us", "UTC")
    assert schema.field("ntz").type == pa.timestamp("us")
    assert schema.field("dec").type == pa.decimal128(5, 2)
    back = spark.read.format("lance").load(table_uri)
    assert back.schema.simpleString() == frame.schema.simpleString()
    assert back.collect() == frame.collect()


def test_fixed_size_list_requested_on_first_write_and_kept_on_append(spark, table_uri: str) -> None:
    frame = spark.sql("SELECT id, array(CAST(id AS FLOAT), 0.5F) AS embedding FROM range(4)")
    frame.write.format("lance").mode("overwrite").option("fixed_size_list.embedding", "2").save(table_uri)
    assert lance.dataset(table_uri).schema.field("embedding").type == pa.list_(pa.float32(), 2)
    frame.write.format("lance").mode("append").save(table_uri)
    frame.write.format("lance").mode("overwrite").save(table_uri)
    dataset = lance.dataset(table_uri)
    assert dataset.schema.field("embedding").type == pa.list_(pa.float32(), 2)
    assert dataset.count_rows() == 4
    assert sorted(dataset.to_table().column("embedding").to_pylist())[3] == [3.0, 0.5]


def test_fixed_size_list_of_wrong_length_fails_the_write(spark, table_uri: str) -> None:
    frame = spark.sql("SELECT array(1.0F, 2.0F, 3.0F) AS embedding")
    with pytest.raises(Exception, match="(?i)size|length"):
        frame.write.format("lance").mode("overwrite").option("fixed_size_list.embedding", "2").save(table_uri)


def test_unmappable_types_are_named() -> None:
    with pytest.raises(TypeError, match="decimal256"):
        to_spark_type(pa.decimal256(60, 2))


def test_append_rejects_unknown_columns() -> None:
    existing = pa.schema([("a", pa.int64())])
    with pytest.raises(ValueError, match="'b'"):
        lance_write_schema(pa.schema([("a", pa.int64()), ("b", pa.string())]), existing, {}, append=True)


def test_an_overwrite_asking_for_vectors_replaces_a_variable_list_or_another_size() -> None:
    """A table written before a vector index named its column holds a variable-length list; the
    rebuild that `--full-refresh` makes must write the column as vectors."""
    incoming = pa.schema([("emb", pa.list_(pa.float32()))])
    for existing in (pa.list_(pa.float32()), pa.list_(pa.float32(), 3)):
        written = lance_write_schema(incoming, pa.schema([("emb", existing)]), {"emb": 2}, append=False)
        assert written.field("emb").type == pa.list_(pa.field("item", pa.float32()), 2)
    kept = pa.list_(pa.field("item", pa.float32(), nullable=False), 2)
    same = lance_write_schema(incoming, pa.schema([("emb", kept)]), {"emb": 2}, append=False)
    assert same.field("emb").type == pa.list_(pa.float32(), 2)  # kept; its items nullable, as always


def test_written_columns_are_nullable_even_when_spark_says_not_null() -> None:
    """`1 AS id` is NOT NULL to Spark; the table must still take nulls from a later merge."""
    incoming = pa.schema([pa.field("id", pa.int32(), nullable=False), pa.field("name", pa.string())])
    written = lance_write_schema(incoming, None, {}, append=False)
    assert [field.nullable for field in written] == [True, True]


def test_not_null_columns_are_written_non_nullable_and_must_exist() -> None:
    incoming = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])
    written = lance_write_schema(incoming, None, {}, append=False, not_null=["ID"])
    assert [field.nullable for field in written] == [False, True]
    with pytest.raises(ValueError, match="not_null option names columns \\['nope'\\]"):
        lance_write_schema(incoming, None, {}, append=False, not_null=["nope"])


def test_conform_passes_a_matching_batch_through_and_casts_otherwise() -> None:
    schema = pa.schema([("id", pa.int64()), ("name", pa.string())])
    batch = pa.record_batch([pa.array([1, 2]), pa.array(["a", None])], schema=schema)
    assert conform(batch, schema) is batch
    narrow = pa.record_batch([pa.array(["x"]), pa.array([3], pa.int32())], names=["NAME", "ID"])
    assert conform(narrow, schema).to_pylist() == [{"id": 3, "name": "x"}]
    decimals = pa.schema([("amount", pa.decimal128(10, 2))])
    money = pa.record_batch([pa.array([1], pa.decimal128(10, 2))], schema=decimals)
    assert conform(money, decimals) is not money  # realigned copy, see _aligned


def test_a_fixed_size_option_wins_over_the_columns_metadata_in_any_case(spark, table_uri: str) -> None:
    """Spark lower-cases option keys: `fixed_size_list.Embedding` reaches the source as
    `fixed_size_list.embedding` and still sets the size of the column `Embedding`, over the size a
    frame read from another Lance table carries in the column's metadata."""
    field = T.StructField("Embedding", T.ArrayType(T.FloatType()), metadata={FIXED_SIZE_METADATA: "2"})
    frame = spark.createDataFrame([([1.0, 2.0, 3.0],)], T.StructType([field]))
    frame.write.format("lance").mode("overwrite").option("fixed_size_list.Embedding", "3").save(table_uri)
    dataset = lance.dataset(table_uri)
    assert dataset.schema.field("Embedding").type == pa.list_(pa.float32(), 3)
    assert dataset.to_table().column("Embedding").to_pylist() == [[1.0, 2.0, 3.0]]


def test_nested_values_are_written_nullable_map_keys_excepted() -> None:
    """Spark's `array(1, 2)` has non-null elements; stored so, no later write could hold a NULL."""
    strict = pa.field("x", pa.int32(), nullable=False)
    incoming = pa.schema(
        [
            pa.field("arr", pa.list_(strict)),
            pa.field("st", pa.struct([strict, pa.field("inner", pa.list_(strict), nullable=False)])),
            pa.field("mp", pa.map_(pa.string(), strict)),
            pa.field("vec", pa.list_(pa.field("item", pa.float32(), nullable=False))),
        ]
    )
    schema = lance_write_schema(incoming, None, {"vec": 2}, append=False)
    assert schema.field("arr").type.value_field.nullable
    struct = schema.field("st").type
    assert struct.field("x").nullable and struct.field("inner").nullable
    assert struct.field("inner").type.value_field.nullable
    assert schema.field("mp").type.item_field.nullable and not schema.field("mp").type.key_field.nullable
    assert schema.field("vec").type == pa.list_(pa.float32(), 2)
    assert schema.field("vec").type.value_field.nullable
    # an existing column of the same Spark type keeps its Lance type, its nested values relaxed
    stored = pa.schema([pa.field("arr", pa.large_list(strict))])
    rewritten = lance_write_schema(pa.schema([pa.field("arr", pa.list_(strict))]), stored, {}, append=False)
    assert rewritten.field("arr").type == pa.large_list(pa.int32())
