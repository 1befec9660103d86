"""`merge.replace_frame` with a filter: deletes exactly the matching rows of a many-fragment table,
one version."""

from __future__ import annotations

from pathlib import Path

import lance
import pyarrow as pa
import pytest
from pyspark.sql import DataFrame

from dbt.adapters.lancens.commits.table_write import open_write
from dbt.adapters.lancens.materializations import merge
from dbt.adapters.lancens.runtime.process import LancensRuntime
from tests.unit.adapter.helpers import append_rows


def _frame(runtime: LancensRuntime, rows: pa.Table) -> DataFrame:
    """`rows` as a Spark DataFrame, as the model's frame reaches `merge.replace_frame`."""
    runtime.activate()
    return runtime.spark.createDataFrame(rows)


@pytest.fixture
def runtime(spark, tmp_path: Path) -> LancensRuntime:
    runtime = LancensRuntime.shared({"root": str(tmp_path / "root")}, "local[2]", {})
    runtime.namespace.create_namespace(["shop"])
    return runtime


def _fragment(day: int) -> pa.Table:
    return pa.table({"id": [day * 10 + i for i in range(3)], "day": [day] * 3})


def test_replace_where_deletes_matching_rows_across_fragments_in_one_version(runtime: LancensRuntime) -> None:
    namespace = runtime.namespace
    namespace.create_table(["shop", "events"], _fragment(0))
    for day in (1, 2, 3):
        append_rows(runtime, ["shop", "events"], _fragment(day))
    before = lance.dataset(namespace.describe_table(["shop", "events"]).location)
    assert len(before.get_fragments()) == 4

    # Day 1 is deleted whole (its fragment goes), day 3 in part (a deletion vector); 0 and 2 untouched.
    version, added = merge.replace_frame(
        open_write(runtime, ["shop", "events"], must_exist=True),
        _frame(runtime, pa.table({"id": [99], "day": [9]})),
        {},
        where="day = 1 OR id = 31",
    )
    assert added == 1  # counted from the written fragments

    after = lance.dataset(namespace.describe_table(["shop", "events"]).location)
    assert version == before.version + 1 == after.version
    assert sorted(after.to_table().column("id").to_pylist()) == [0, 1, 2, 20, 21, 22, 30, 32, 99]
    fragments = {f.fragment_id: f for f in after.get_fragments()}
    kept = {f.fragment_id for f in before.get_fragments()} - {before.get_fragments()[1].fragment_id}
    assert kept <= set(fragments)
    assert before.get_fragments()[1].fragment_id not in fragments
    assert fragments[before.get_fragments()[3].fragment_id].metadata.deletion_file is not None
    assert fragments[before.get_fragments()[2].fragment_id].metadata.deletion_file is None


def test_replace_where_matching_nothing_only_appends(runtime: LancensRuntime) -> None:
    runtime.namespace.create_table(["shop", "events"], _fragment(0))
    target = open_write(runtime, ["shop", "events"], must_exist=True)
    merge.replace_frame(target, _frame(runtime, _fragment(5)), {}, where="day = 7")
    after = lance.dataset(runtime.namespace.describe_table(["shop", "events"]).location)
    assert after.count_rows() == 6
    assert all(f.metadata.deletion_file is None for f in after.get_fragments())
