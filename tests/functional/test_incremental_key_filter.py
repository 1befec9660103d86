"""A merge, a delete+insert and a partitioned insert_overwrite into tables of more than a million
rows read the table through the key filter (spark/key_filter.py) and still change exactly the rows
dbt's own strategies change. The dbt run is in this process, so the driver's KeyFilter counts the
summaries it built."""

from __future__ import annotations

import lance
import pyarrow.compute as pc
import pytest
from dbt.tests.util import run_dbt
from pyspark.sql import SparkSession

from dbt.adapters.lancens.namespace import DirectoryNamespace
from dbt.adapters.lancens.spark.java_classes import java_class
from dbt.adapters.lancens.spark.key_filter import KEY_FILTER_CLASS, MIN_STORED

FIRST = MIN_STORED + 100_000  # ids 0 .. FIRST - 1, round 1
CHANGED = (FIRST - 50_000, FIRST + 50_000)  # half of them updates, half new ids, round 2
BLOCK = 100_000  # ids per insert_overwrite partition
_ROWS = (
    "\nselect id, concat('r', {{ var('round', 1) }}) as label, "
    f"cast(id div {BLOCK} as int) as part\n"
    f"from range({{{{ var('lo', 0) }}}}, {{{{ var('hi', {FIRST}) }}}})\n"
)
MODELS = {
    "merged.sql": "{{ config(materialized='incremental', unique_key='id') }}" + _ROWS,
    "deleted_inserted.sql": "{{ config(materialized='incremental', incremental_strategy='delete+insert',"
    " unique_key='id') }}" + _ROWS,
    "overwritten.sql": "{{ config(materialized='incremental', incremental_strategy='insert_overwrite',"
    " partition_by=['part']) }}" + _ROWS,
}


def _summaries(spark: SparkSession) -> int:
    """How many key summaries the driver's KeyFilter has built in this process."""
    return int(java_class(spark._jvm, KEY_FILTER_CLASS).summaries())


class TestKeyFilter:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return MODELS

    def test_large_tables_change_exactly_the_rows_dbt_changes(
        self, project, lancens_root: str, spark: SparkSession
    ) -> None:
        run_dbt(["run"])
        before = _summaries(spark)
        lo, hi = CHANGED
        run_dbt(["run", "--vars", f"{{round: 2, lo: {lo}, hi: {hi}}}"])
        assert _summaries(spark) == before + 3  # one summary per model

        namespace = DirectoryNamespace(lancens_root)

        def table(name: str):  # -> pa.Table
            return lance.dataset(namespace.describe_table([project.test_schema, name]).location).to_table()

        for name in ("merged", "deleted_inserted"):
            rows = table(name)
            assert rows.num_rows == hi  # every id once: updated in place or added
            assert pc.count_distinct(rows.column("id")).as_py() == hi
            changed = rows.filter(pc.greater_equal(rows.column("id"), lo))
            assert changed.num_rows == hi - lo
            assert set(changed.column("label").to_pylist()) == {"r2"}
            assert set(rows.filter(pc.less(rows.column("id"), lo)).column("label").to_pylist()) == {"r1"}

        rows = table("overwritten")
        touched = lo // BLOCK * BLOCK  # the partitions the new rows fall in are replaced whole
        assert rows.num_rows == touched + (hi - lo)
        assert set(rows.filter(pc.less(rows.column("id"), touched)).column("label").to_pylist()) == {"r1"}
        replaced = rows.filter(pc.greater_equal(rows.column("id"), touched))
        assert sorted(replaced.column("id").to_pylist()) == list(range(lo, hi))
        assert set(replaced.column("label").to_pylist()) == {"r2"}
