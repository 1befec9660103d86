"""dbt's writes on the JVM connector path (`spark_connector: jvm`): Spark tasks write the model's
rows with lance-core inside Spark's JVM (`spark/jvm_writer.py`), the commit stays the engine's.

Each table written so is checked against the same rows written by Spark to Parquet (values, read
back by lance-core through the connector), against the Python writer's files for the same frame and
Lance schema (pyarrow schema and `to_table()` equal), for its data-file version (the table's own:
2.2 throughout, so no reader flag a lance-core reader refuses) and for the write having run in the
JVM (its Spark job's description). A failing task leaves the previous version and no stray file; a
NULL for a NOT NULL field fails naming the column; a type the JVM writer has no exact copy for
(a map) is written by the Python writer, saying so in the log."""

from __future__ import annotations

import os
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture
from pyspark.sql import DataFrame, SparkSession

from dbt.adapters.lancens.namespace import DirectoryNamespace
from dbt.adapters.lancens.spark import jvm_connector
from dbt.adapters.lancens.spark.java_classes import seq_elements
from dbt.adapters.lancens.spark.jvm_writer import JOB_PREFIX, JvmWrite, write_fragments
from dbt.adapters.lancens.spark.options import LanceOptions
from dbt.adapters.lancens.spark.writer import LanceWriter, write_with_tasks

ROWS = 3000
# Every common column type, NULLs in nullable columns, three input partitions (three tasks).
TYPED_SELECT = f"""
select
  id,
  cast(id % 100 as tinyint) as i8,
  cast(id as smallint) as i16,
  cast(id as int) as i32,
  cast(id / 3 as float) as f32,
  case when id % 5 = 0 then null else cast(id as double) / 7 end as f64,
  case when id % 4 = 0 then null else concat('row ', cast(id as string), ' é') end as s,
  id % 2 = 0 as flag,
  date_add(date'2024-01-01', cast(id as int)) as day,
  timestamp_seconds(1700000000 + id) as ts,
  cast(timestamp_seconds(1700000000 + id) as timestamp_ntz) as ts_ntz,
  cast(id / 3 as decimal(10, 2)) as amount,
  cast(id * 1000003 as decimal(30, 5)) as big_amount,
  cast(cast(id as string) as binary) as raw,
  named_struct('a', id, 'b', cast(id as string), 'inner', named_struct('x', cast(id as double))) as st,
  case when id % 3 = 0 then null else array(id, id + 1) end as ints,
  array(cast(id as string), null) as strings,
  array(named_struct('k', id)) as structs,
  array(cast(id as float), cast(id * 2 as float)) as vec
from range(0, {ROWS}, 1, 3) as t(id)
"""
INDEX = "indexes=[{'columns': ['vec'], 'type': 'ivf_flat', 'num_partitions': 1}]"
TYPED = f"{{{{ config(materialized='table', {INDEX}) }}}}\n{TYPED_SELECT}"
GROWS = (
    "{{ config(materialized='incremental', incremental_strategy='append') }}\n"
    "select id + {{ var('offset', 0) }} as id, cast(id as string) as s from range(0, 500, 1, 2) as t(id)"
)
# Fails in its last task when `bad` names a row: the other tasks may have written their files.
FAILING = (
    "{{ config(materialized='table') }}\n"
    "select id, case when id = {{ var('bad', -1) }} then cast(raise_error('boom in a task') as bigint) "
    "else id end as v from range(0, 40000, 1, 4) as t(id)"
)
MAPPED = "{{ config(materialized='table') }}\nselect id, map('k', id) as m from range(0, 10) as t(id)"
CONTRACTED = "select cast(id as bigint) as id, cast(id as string) as s from range(1, 4) as t(id)"
CONTRACT_YML = """
version: 2
models:
  - name: contracted
    config:
      materialized: table
      contract: {enforced: true}
    columns:
      - name: id
        data_type: bigint
        constraints:
          - type: not_null
      - name: s
        data_type: string
"""


def _location(project, root: str, name: str) -> str:
    return DirectoryNamespace(root).describe_table([project.test_schema, name]).location


def _jvm_jobs(spark: SparkSession, location: str) -> int:
    """How many Spark jobs of this session wrote Lance files to `location` in the JVM."""
    wanted = f"{JOB_PREFIX} {location}"
    descriptions = (job.description() for job in seq_elements(spark._jsc.sc().statusStore().jobsList(None)))
    return sum(1 for d in descriptions if d.isDefined() and str(d.get()).endswith(wanted))


def _data_files(location: str) -> set[str]:
    data = Path(location.removeprefix("file://")) / "data"
    return set(os.listdir(data)) if data.is_dir() else set()


def _ordered(frame: DataFrame) -> list:
    return frame.orderBy("id").collect()


def _python_written(frame: DataFrame, schema: pa.Schema, location: str) -> lance.LanceDataset:
    """`frame` written by the Python writer into a new table of `schema` (the reference)."""
    writer = LanceWriter(
        LanceOptions(uri=location), schema, overwrite=True, read_version=None, storage_version=None
    )
    fragments = write_with_tasks(frame, writer)
    return lance.LanceDataset.commit(location, lance.LanceOperation.Overwrite(schema, fragments))


class TestJvmWrites:
    @pytest.fixture(scope="class")
    def profiles_config_update(self, dbt_profile_target: dict, unique_schema: str) -> dict:
        target = {**dbt_profile_target, "schema": unique_schema, "spark_connector": "jvm"}
        return {"test": {"outputs": {"default": target}, "target": "default"}}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "typed.sql": TYPED,
            "grows.sql": GROWS,
            "failing.sql": FAILING,
            "mapped.sql": MAPPED,
            "contracted.sql": CONTRACTED,
            "contract.yml": CONTRACT_YML,
        }

    def test_a_table_of_every_common_type(
        self, project, lancens_root: str, spark: SparkSession, tmp_path: Path
    ) -> None:
        run_dbt(["run", "--select", "typed"])
        location = _location(project, lancens_root, "typed")
        assert _jvm_jobs(spark, location) == 1
        written = lance.dataset(location)
        assert written.count_rows() == ROWS
        assert written.data_storage_version == "2.2"
        assert {
            (f.file_major_version, f.file_minor_version)
            for fragment in written.get_fragments()
            for f in fragment.data_files()
        } == {(2, 2)}
        assert written.schema.field("vec").type == pa.list_(pa.field("item", pa.float32()), 2)
        assert [index["name"] for index in written.list_indices()]  # the vector index built on it
        # lance-core (the driver JVM) can read it: no reader flag, no file version it does not know
        assert jvm_connector.unreadable(spark, location, None, {}) is None

        # the values: lance-core reads back exactly what Spark writes to Parquet
        frame = spark.sql(TYPED_SELECT)
        parquet = str(tmp_path / "typed.parquet")
        frame.write.parquet(parquet)
        assert _ordered(spark.read.format("lance_jvm").load(location)) == _ordered(
            spark.read.parquet(parquet)
        )

        # the files: the Python writer, given the same frame and Lance schema, writes the same table
        reference = _python_written(frame, written.schema, str(tmp_path / "reference.lance"))
        assert reference.schema == written.schema
        assert reference.to_table().sort_by("id").equals(written.to_table().sort_by("id"))

    def test_appends_build_on_the_table(self, project, lancens_root: str, spark: SparkSession) -> None:
        run_dbt(["run", "--select", "grows"])
        run_dbt(["run", "--select", "grows", "--vars", "{offset: 500}"])
        location = _location(project, lancens_root, "grows")
        assert _jvm_jobs(spark, location) == 2
        table = lance.dataset(location).to_table().sort_by("id")
        assert table.column("id").to_pylist() == list(range(1000))
        assert table.column("s").to_pylist() == [str(i % 500) for i in range(1000)]
        assert jvm_connector.unreadable(spark, location, None, {}) is None

    def test_a_failing_task_leaves_the_previous_version(self, project, lancens_root: str) -> None:
        run_dbt(["run", "--select", "failing"])
        location = _location(project, lancens_root, "failing")
        before = lance.dataset(location)
        files = _data_files(location)
        _, output = run_dbt_and_capture(
            ["run", "--select", "failing", "--vars", "{bad: 39999}"], expect_pass=False
        )
        assert "boom in a task" in output
        after = lance.dataset(location)
        assert after.version == before.version
        assert after.count_rows() == 40000
        assert _data_files(location) == files  # the tasks that had finished: their files deleted too

    def test_a_null_in_a_not_null_field_names_the_column(self, project, lancens_root: str) -> None:
        """Spark's own check refuses the INSERT first; the JVM writer's (next test) backs it."""
        run_dbt(["run", "--select", "contracted"])
        location = _location(project, lancens_root, "contracted")
        before = lance.dataset(location)
        assert not before.schema.field("id").nullable
        files = _data_files(location)
        with pytest.raises(Exception, match=r"(?s)NULL.*non-nullable field.*id"):
            project.run_sql(
                f"insert into {project.test_schema}.contracted select cast(null as bigint) as id, 'x' as s"
            )
        after = lance.dataset(location)
        assert after.version == before.version and after.count_rows() == 3
        assert _data_files(location) == files

    def test_a_map_is_written_by_the_python_writer(
        self, project, lancens_root: str, spark: SparkSession
    ) -> None:
        _, output = run_dbt_and_capture(["--debug", "run", "--select", "mapped"])
        location = _location(project, lancens_root, "mapped")
        assert "mapped is written through the Python writer" in output
        assert _jvm_jobs(spark, location) == 0
        table = lance.dataset(location).to_table().sort_by("id")
        assert table.column("m").to_pylist() == [[("k", i)] for i in range(10)]


def test_the_jvm_writer_refuses_a_null_for_a_not_null_field(spark: SparkSession, tmp_path: Path) -> None:
    """A frame Spark thinks nullable, written into a NOT NULL field: the task fails naming the column
    and the files every task wrote are deleted."""
    location = str(tmp_path / "strict.lance")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("s", pa.string())])
    frame = spark.sql(
        "select case when id = 1999 then null else id end as id, cast(id as string) as s "
        "from range(0, 2000, 1, 2) as t(id)"
    )
    with pytest.raises(Exception, match="column id is NOT NULL in the Lance table's schema"):
        write_fragments(frame, JvmWrite(location, schema, "2.2", overwrite=True))
    assert _data_files(location) == set()
