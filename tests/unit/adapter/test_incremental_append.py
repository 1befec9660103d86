"""Incremental appends (`append`, and `merge` or `delete+insert` without `unique_key`) are written by
Spark tasks from the model's frame, never collected to the driver: the stored rows are those Spark
computes, cast as Spark's INSERT casts them, in one new version; a failing write leaves the table's
versions, columns and data files as they were."""

from __future__ import annotations

from pathlib import Path

import lance
import pyarrow as pa
import pytest
from pyspark.sql import DataFrame

from dbt.adapters.lancens.commits import writes
from dbt.adapters.lancens.materializations import incremental
from dbt.adapters.lancens.namespace.errors import ConcurrentModificationError
from dbt.adapters.lancens.runtime.process import LancensRuntime

TABLE = ["shop", "events"]
STORED = pa.schema([("id", pa.int64()), ("Label", pa.string()), ("small", pa.int32())])
MODEL = (
    "SELECT id, CAST(id AS DOUBLE) AS label, CAST(id AS INT) AS small "
    "FROM range(10, 1010, 1, 3) WHERE id % 7 <> 3"
)
APPENDS = [
    {"strategy": "append"},
    {"strategy": "merge"},
    {"strategy": "delete+insert"},
]


@pytest.fixture
def runtime(spark, tmp_path: Path) -> LancensRuntime:
    runtime = LancensRuntime.shared({"root": str(tmp_path / "root")}, "local[2]", {})
    runtime.namespace.create_namespace(["shop"])
    runtime.namespace.create_table(
        TABLE, pa.table({"id": [1, 2], "Label": ["a", "b"], "small": [1, 2]}, schema=STORED)
    )
    runtime.activate()
    return runtime


@pytest.fixture
def uncollected(monkeypatch: pytest.MonkeyPatch, runtime: LancensRuntime) -> None:
    """The model's frame cannot be collected to the driver (an append must not try)."""
    frame_class = type(runtime.spark.range(1))
    assert issubclass(frame_class, DataFrame)

    def refuse(self: DataFrame) -> pa.Table:
        raise AssertionError("an append collected the model's rows to the driver")

    monkeypatch.setattr(frame_class, "toArrow", refuse)


def _dataset(runtime: LancensRuntime) -> lance.LanceDataset:
    return lance.dataset(runtime.namespace.describe_table(TABLE).location)


def _data_files(runtime: LancensRuntime) -> set[str]:
    return {path.name for path in Path(_dataset(runtime).uri, "data").iterdir()}


def _apply(runtime: LancensRuntime, sql: str, **spec: object) -> tuple[int, int]:
    return incremental.apply(runtime, TABLE, runtime.sql(sql), incremental.Spec(**spec), {})  # type: ignore[arg-type]


@pytest.mark.usefixtures("uncollected")
@pytest.mark.parametrize("spec", APPENDS, ids=[spec["strategy"] for spec in APPENDS])
def test_an_append_is_written_by_tasks_as_spark_inserts_it_in_one_version(
    runtime: LancensRuntime, spec: dict, tmp_path: Path
) -> None:
    before = _dataset(runtime).version
    version, rows = _apply(runtime, MODEL, **spec)

    spark = runtime.spark
    spark.sql(
        f"CREATE TABLE append_copy (id BIGINT, Label STRING, small INT) USING parquet "
        f"LOCATION '{tmp_path / 'parquet'}'"
    )
    try:
        spark.sql(f"INSERT INTO append_copy {MODEL}")
        expected = [row.asDict() for row in spark.sql("SELECT * FROM append_copy ORDER BY id").collect()]
    finally:
        spark.sql("DROP TABLE append_copy")
    stored = _dataset(runtime)
    assert (version, stored.version) == (before + 1, before + 1)  # one commit, an Append
    assert stored.schema == STORED
    assert rows == len(expected) == 857
    assert stored.to_table().sort_by("id").to_pylist()[2:] == expected
    assert expected[0]["Label"] == "11.0"  # Spark's cast of a double into a string (Arrow's gives "5")
    assert len(stored.get_fragments()) == 1 + 3  # written by the three tasks


TOO_BIG = "SELECT id, 'x' AS Label, id * 4294967296 AS small, 1 AS added FROM range(1, 5)"
# a rewrite (`Label` dropped, `small` made a bigint) first, whose rows then fail in Spark
FAILING = "SELECT id, CASE WHEN id = 4 THEN raise_error('small fails') ELSE id END AS small FROM range(1, 5)"


@pytest.mark.parametrize(
    ("on_schema_change", "sql"),
    [("ignore", TOO_BIG), ("append_new_columns", TOO_BIG), ("sync_all_columns", FAILING)],
)
def test_a_value_that_fails_leaves_no_version_column_or_file(
    runtime: LancensRuntime, on_schema_change: str, sql: str
) -> None:
    before = _dataset(runtime)
    files = _data_files(runtime)
    with pytest.raises(Exception, match="small"):
        _apply(runtime, sql, strategy="append", on_schema_change=on_schema_change)
    after = _dataset(runtime)
    assert after.schema == STORED  # an added column was taken back
    assert after.to_table() == before.to_table()
    assert _data_files(runtime) == files  # the tasks' files were deleted


@pytest.mark.usefixtures("uncollected")
def test_new_columns_are_added_and_a_column_the_model_dropped_is_null(runtime: LancensRuntime) -> None:
    sql = "SELECT 3L AS id, 7 AS SMALL, array(1.0D, 2.0D) AS vec UNION ALL SELECT 4L, 8, NULL"
    version, rows = _apply(runtime, sql, strategy="append", on_schema_change="append_new_columns")
    stored = _dataset(runtime)
    assert (version, rows) == (stored.version, 2)
    assert stored.schema.names == ["id", "Label", "small", "vec"]
    assert stored.to_table().sort_by("id").to_pylist()[2:] == [
        {"id": 3, "Label": None, "small": 7, "vec": [1.0, 2.0]},
        {"id": 4, "Label": None, "small": 8, "vec": None},
    ]


@pytest.mark.usefixtures("uncollected")
def test_an_empty_run_changes_columns_only(runtime: LancensRuntime) -> None:
    version, rows = _apply(
        runtime,
        "SELECT 9L AS id, 'z' AS extra",
        strategy="append",
        on_schema_change="append_new_columns",
        empty=True,
    )
    stored = _dataset(runtime)
    assert (version, rows, stored.count_rows()) == (stored.version, 0, 2)
    assert stored.schema.names == ["id", "Label", "small", "extra"]


@pytest.mark.usefixtures("uncollected")
def test_a_model_reading_its_table_appends_what_it_read_before_a_rewrite(runtime: LancensRuntime) -> None:
    """`sync_all_columns` rewrites the table (`Label` dropped, `small` retyped) before the rows land;
    the model's rows are those of the version its query read."""
    sql = "SELECT id + 10 AS id, CAST(small AS BIGINT) AS small FROM shop.events"
    version, rows = _apply(runtime, sql, strategy="append", on_schema_change="sync_all_columns")
    stored = _dataset(runtime)
    assert (version, rows) == (stored.version, 2)
    assert stored.schema == pa.schema([("id", pa.int64()), ("small", pa.int64())])
    assert stored.to_table().sort_by("id").to_pylist() == [
        {"id": i, "small": s} for i, s in ((1, 1), (2, 2), (11, 1), (12, 2))
    ]


def test_a_commit_made_while_the_tasks_ran_refuses_the_append(
    runtime: LancensRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer commits (here a restore, which Lance would let an Append land on) while the
    model's query, which may read the table, runs as the append's tasks."""
    files = _data_files(runtime)
    write_tasks = writes.write_tasks

    def racing(*args: object, **kwargs: object) -> list:
        written = write_tasks(*args, **kwargs)  # type: ignore[arg-type]
        runtime.namespace.restore_table(TABLE, 1)  # version 2, rows as version 1
        return written

    monkeypatch.setattr(writes, "write_tasks", racing)
    with pytest.raises(ConcurrentModificationError, match="changed from version 1 to 2"):
        _apply(runtime, MODEL, strategy="append")
    assert _dataset(runtime).version == 2  # the other writer's commit only
    assert _dataset(runtime).count_rows() == 2
    assert _data_files(runtime) == files  # the tasks' files were deleted
