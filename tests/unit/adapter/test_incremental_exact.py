"""Incremental strategies that join the model's result with the table change exactly the rows dbt's
SQL would, and leave every other row as Lance stores it: on tables pylance wrote with types Spark
lacks, with nanosecond timestamps, duplicate keys, and NULL partitions of any type."""

from __future__ import annotations

import datetime as dt
import decimal
import struct
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from dbt_common.exceptions import CompilationError, DbtRuntimeError

from dbt.adapters.lancens.materializations import incremental
from dbt.adapters.lancens.runtime.process import LancensRuntime

TABLE = ["shop", "items"]
NEGATIVE_NAN = struct.unpack("<d", struct.pack("<Q", 0xFFF8000000000000))[0]  # numpy's inf - inf
NANOS = pa.array([1_700_000_000_123_456_789, 1_700_000_001_987_654_321], pa.timestamp("ns"))


@pytest.fixture
def runtime(spark, tmp_path: Path) -> LancensRuntime:
    runtime = LancensRuntime.shared({"root": str(tmp_path / "root")}, "local[2]", {})
    runtime.namespace.create_namespace(["shop"])
    return runtime


def _create(runtime: LancensRuntime, table: pa.Table) -> None:
    runtime.namespace.create_table(TABLE, table)


def _apply(runtime: LancensRuntime, sql: str, **spec: object) -> None:
    runtime.activate()
    incremental.apply(runtime, TABLE, runtime.sql(sql), incremental.Spec(**spec), {})  # type: ignore[arg-type]


def _stored(runtime: LancensRuntime) -> lance.LanceDataset:
    return lance.dataset(runtime.namespace.describe_table(TABLE).location)


def _rows(runtime: LancensRuntime, order_by: tuple[str, ...] = ("id",)) -> list[dict]:
    table = _stored(runtime).to_table()
    return table.sort_by([(name, "ascending") for name in order_by]).to_pylist()


def _spark_lacks() -> pa.Table:
    """Columns PySpark's Arrow import rejects: unsigned, half float, date64, view strings."""
    return pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int64()),
            "small": pa.array([7, 8, 9], pa.uint32()),
            "half": pa.array([0.5, 1.5, 2.5], pa.float16()),
            "day": pa.array([dt.date(2024, 1, d) for d in (1, 2, 3)], pa.date64()),
            "label": pa.array(["a", "b", "c"], pa.string_view()),
            "kept": pa.array(["k1", "k2", "k3"], pa.string_view()),
        }
    )


_NEW_ROWS = (
    "SELECT CAST(id AS BIGINT) AS id, CAST(small AS INT) AS small, CAST(half AS FLOAT) AS half, "
    "DATE'2025-05-05' AS day, label, kept FROM VALUES (2, 80, 4.0, 'B', 'new'), (4, 10, 3.0, 'd', 'x') "
    "AS t(id, small, half, label, kept)"
)


@pytest.mark.parametrize(
    "spec",
    [
        {"strategy": "merge", "unique_key": ["id"], "predicates": ["DBT_INTERNAL_DEST.small > 0"]},
        {"strategy": "merge", "unique_key": ["id"], "exclude_columns": ["kept"]},
        {"strategy": "delete+insert", "unique_key": ["id"], "predicates": ["DBT_INTERNAL_DEST.small > 0"]},
    ],
    ids=["merge-predicates", "merge-exclude", "delete-insert-predicates"],
)
def test_tables_with_types_spark_lacks(runtime: LancensRuntime, spec: dict) -> None:
    _create(runtime, _spark_lacks())
    schema = _stored(runtime).schema
    _apply(runtime, _NEW_ROWS, **spec)
    assert _stored(runtime).schema == schema  # no column changed type
    rows = _rows(runtime)
    assert [row["id"] for row in rows] == [1, 2, 3, 4]
    assert rows[0] == _spark_lacks().to_pylist()[0] and rows[2] == _spark_lacks().to_pylist()[2]
    assert (rows[1]["small"], rows[1]["half"], rows[1]["label"]) == (80, 4.0, "B")
    assert rows[1]["kept"] == ("k2" if spec.get("exclude_columns") else "new")
    assert rows[3]["kept"] == "x"


def test_rows_left_alone_keep_their_nanoseconds(runtime: LancensRuntime) -> None:
    """A key's row the predicates exclude, and an excluded column of an updated row, keep the
    values Lance stores, to the nanosecond."""
    _create(
        runtime,
        pa.table({"id": [1, 1], "part": ["old", "new"], "seen": NANOS, "note": ["n1", "n2"]}),
    )
    _apply(
        runtime,
        "SELECT 1L AS id, 'new' AS part, TIMESTAMP_NTZ'2030-01-01 00:00:00' AS seen, 'fresh' AS note",
        strategy="merge",
        unique_key=["id"],
        predicates=["DBT_INTERNAL_DEST.part = 'new'"],
        exclude_columns=["seen"],
    )
    rows = _rows(runtime, ("part",))
    assert [row["note"] for row in rows] == ["fresh", "n1"]
    seen = _stored(runtime).to_table().sort_by("part").column("seen").cast(pa.int64()).to_pylist()
    assert seen == NANOS.cast(pa.int64()).to_pylist()[::-1]


@pytest.mark.parametrize(
    "spec",
    [
        {"strategy": "merge", "unique_key": ["id"]},
        {"strategy": "merge", "unique_key": ["id"], "predicates": ["DBT_INTERNAL_DEST.value <> 'never'"]},
        {"strategy": "delete+insert", "unique_key": ["id"]},
    ],
    ids=["merge", "merge-predicates", "delete-insert"],
)
def test_keys_equal_in_spark_are_one_key(runtime: LancensRuntime, spec: dict) -> None:
    """-0.0 and 0.0 are the same key to Spark's join (dbt-spark's MERGE ON), on every path, so the
    stored row is replaced, not duplicated."""
    _create(runtime, pa.table({"id": pa.array([-0.0, 1.0]), "value": ["old", "one"]}))
    _apply(runtime, "SELECT CAST(0.0 AS DOUBLE) AS id, 'new' AS value", **spec)
    assert [row["value"] for row in _rows(runtime)] == ["new", "one"]


@pytest.mark.parametrize(
    "spec",
    [{"exclude_columns": ["note"]}, {"update_columns": ["v"]}],
    ids=["exclude", "update"],
)
def test_columns_kept_on_a_table_of_not_null_columns(runtime: LancensRuntime, spec: dict) -> None:
    """A contracted model's `not_null` columns are stored non-nullable; kept values keep that type."""
    schema = pa.schema(
        [pa.field("id", pa.int64(), nullable=False), ("v", pa.string()), pa.field("note", pa.string(), False)]
    )
    _create(runtime, pa.table({"id": [1, 2], "v": ["a", "b"], "note": ["n1", "n2"]}, schema=schema))
    _apply(
        runtime,
        "SELECT 1L AS id, 'A' AS v, 'lost' AS note UNION ALL SELECT 3L, 'c', 'n3'",
        strategy="merge",
        unique_key=["id"],
        not_null=["id", "note"],  # the contract, as the incremental macro passes it
        **spec,
    )
    assert _rows(runtime) == [
        {"id": 1, "v": "A", "note": "n1"},
        {"id": 2, "v": "b", "note": "n2"},
        {"id": 3, "v": "c", "note": "n3"},
    ]
    assert _stored(runtime).schema == schema


def test_a_changed_column_type_fails_on_schema_change_fail(runtime: LancensRuntime) -> None:
    """dbt-core's check compares data types too: `fail` stops before Spark casts anything."""
    _create(runtime, pa.table({"id": [1], "v": ["a"]}))
    with pytest.raises(CompilationError, match=r"columns whose type changed: \['v \(string -> double\)'\]"):
        _apply(runtime, "SELECT 2L AS id, 1.5D AS v", strategy="append", on_schema_change="fail")
    assert _rows(runtime) == [{"id": 1, "v": "a"}]


def test_merge_column_lists_are_checked_for_merge_only(runtime: LancensRuntime) -> None:
    """As dbt, which reads `merge_update_columns` only in its merge: other strategies ignore it."""
    _create(runtime, pa.table({"id": [1], "v": ["a"]}))
    _apply(runtime, "SELECT 2L AS id, 'b' AS v", strategy="append", update_columns=["missing"])
    assert _rows(runtime) == [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]


def test_a_key_repeated_in_the_result_fails_only_when_both_match_one_row(runtime: LancensRuntime) -> None:
    """dbt's MERGE rule: two result rows with one key are fine while at most one matches each
    stored row; the unmatched one is inserted. Two matching one row fail, writing nothing."""
    _create(runtime, pa.table({"id": [1], "tag": ["x"], "value": ["old"]}))
    rows = "SELECT 1L AS id, tag, value FROM VALUES ('x', 'new'), ('y', 'other') AS t(tag, value)"
    on_tag = ["DBT_INTERNAL_SOURCE.tag = DBT_INTERNAL_DEST.tag"]
    _apply(runtime, rows, strategy="merge", unique_key=["id"], predicates=on_tag)
    assert _rows(runtime, ("tag",)) == [
        {"id": 1, "tag": "x", "value": "new"},
        {"id": 1, "tag": "y", "value": "other"},
    ]
    version = _stored(runtime).version
    both = "SELECT 1L AS id, 'x' AS tag, value FROM VALUES ('a'), ('b') AS t(value)"
    with pytest.raises(DbtRuntimeError, match="several rows of the model's result match the same row"):
        _apply(runtime, both, strategy="merge", unique_key=["id"], predicates=on_tag)
    assert _stored(runtime).version == version


def test_excluded_columns_on_duplicate_stored_keys(runtime: LancensRuntime) -> None:
    """Each stored row of a key is updated and keeps its own excluded value, as dbt's MERGE does."""
    _create(runtime, pa.table({"id": [1, 1, 2], "value": ["a", "b", "c"], "note": ["n1", "n2", "n3"]}))
    _apply(
        runtime,
        "SELECT 1L AS id, 'z' AS value, 'lost' AS note",
        strategy="merge",
        unique_key=["id"],
        exclude_columns=["note"],
    )
    assert _rows(runtime, ("note",)) == [
        {"id": 1, "value": "z", "note": "n1"},
        {"id": 1, "value": "z", "note": "n2"},
        {"id": 2, "value": "c", "note": "n3"},
    ]


_BERLIN = pa.timestamp("us", tz="Europe/Berlin")


@pytest.mark.parametrize(
    ("values", "literal"),
    [
        (pa.array([decimal.Decimal("1.50"), None, decimal.Decimal("2.00")], pa.decimal128(5, 2)), "1.50BD"),
        (pa.array([b"a", None, b"b"]), "X'61'"),
        (
            pa.array(
                [dt.datetime(2024, 1, 1, 12, tzinfo=dt.UTC), None, dt.datetime(2024, 1, 2, tzinfo=dt.UTC)]
            ).cast(_BERLIN),
            "TIMESTAMP'2024-01-01 12:00:00+00:00'",
        ),
        (pa.array([-0.0, None, 1.0]), "CAST(0.0 AS DOUBLE)"),
        (pa.array([NEGATIVE_NAN, None, 1.0]), "CAST('NaN' AS DOUBLE)"),
        (pa.array([0.5, None, 1.5], pa.float16()), "CAST(0.5 AS FLOAT)"),
        (pa.array(["a", None, "b"]).dictionary_encode(), "'a'"),
    ],
    ids=["decimal", "binary", "berlin-timestamp", "minus-zero", "nan-bits", "float16", "dictionary"],
)
def test_insert_overwrite_replaces_null_and_valued_partitions(
    runtime: LancensRuntime, values: pa.Array, literal: str
) -> None:
    _create(runtime, pa.table({"id": [1, 2, 3], "part": values}))
    stored_type = _stored(runtime).schema.field("part").type
    _apply(
        runtime,
        f"SELECT 10L AS id, {literal} AS part UNION ALL SELECT 20L, NULL",
        strategy="insert_overwrite",
        partition_by=["part"],
    )
    assert sorted(row["id"] for row in _rows(runtime)) == [3, 10, 20]
    assert _stored(runtime).schema.field("part").type == stored_type


def test_a_key_not_among_the_updated_columns_keeps_its_stored_value(runtime: LancensRuntime) -> None:
    """dbt's `UPDATE SET <merge_update_columns>` leaves the key alone: a nanosecond key that Spark
    matches at microseconds keeps its nanoseconds."""
    _create(runtime, pa.table({"id": NANOS[:1], "v": ["old"], "w": ["kept"]}))
    _apply(
        runtime,
        "SELECT TIMESTAMP_NTZ'2023-11-14 22:13:20.123456' AS id, 'new' AS v, 'lost' AS w",
        strategy="merge",
        unique_key=["id"],
        update_columns=["v"],
    )
    stored = _stored(runtime).to_table()
    assert stored.column("id").cast(pa.int64()).to_pylist() == NANOS[:1].cast(pa.int64()).to_pylist()
    assert (stored.column("v").to_pylist(), stored.column("w").to_pylist()) == (["new"], ["kept"])


def test_an_updated_column_the_model_no_longer_selects_fails(runtime: LancensRuntime) -> None:
    """Updating it would write NULL over every matched row's value; dbt's MERGE fails to resolve it."""
    _create(runtime, pa.table({"id": [1], "v": ["old"], "w": ["kept"]}))
    with pytest.raises(
        CompilationError, match="merge_update_columns column 'w' is not a column of the model"
    ):
        _apply(
            runtime, "SELECT 1L AS id, 'new' AS v", strategy="merge", unique_key=["id"], update_columns=["w"]
        )
    assert _rows(runtime) == [{"id": 1, "v": "old", "w": "kept"}]


@pytest.mark.parametrize("strategy", ["merge", "delete+insert"])
def test_a_nanosecond_key_matches_as_spark_reads_it(runtime: LancensRuntime, strategy: str) -> None:
    """Spark reads a nanosecond key at microseconds, so dbt-spark's MERGE ON matches the model's
    microsecond value; Lance's own key match would not, and would add a second row."""
    _create(runtime, pa.table({"id": NANOS[:1], "v": ["old"]}))
    _apply(
        runtime,
        "SELECT TIMESTAMP_NTZ'2023-11-14 22:13:20.123456' AS id, 'new' AS v",
        strategy=strategy,
        unique_key=["id"],
    )
    assert [row["v"] for row in _rows(runtime)] == ["new"]
