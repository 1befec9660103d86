"""The driver JVM's home: Python workers import pyspark from site-packages, not from pyspark.zip.

Spark puts ``$SPARK_HOME/python/lib/pyspark.zip`` first on every Python worker's path, and a zip
gets no cached bytecode, so each daemon compiled pyspark from source. The session launches the JVM
from a home of links without ``python`` when that zip is the interpreter's own pyspark."""

from __future__ import annotations

import io
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyspark
import pytest
from pyspark.find_spark_home import _find_spark_home
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from dbt.adapters.lancens.spark import session

REAL_HOME = _find_spark_home()


@pytest.fixture
def temp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private temporary directory for the homes these tests make."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    return temp


def _links(home: str) -> dict[str, str]:
    return {entry: os.path.realpath(os.path.join(home, entry)) for entry in os.listdir(home)}


def test_the_bundled_home_is_shared_and_leaves_python_out(temp_dir: Path) -> None:
    first = session._launch_home("local[2]", session.default_config(), None)
    second = session._launch_home("local[*]", session.default_config(), None)

    assert first is not None and first == second
    assert [path.name for path in temp_dir.iterdir()] == [os.path.basename(first)]
    links = _links(first)
    assert "python" not in links
    assert links["jars"] == os.path.realpath(os.path.join(REAL_HOME, "jars"))
    assert os.path.isfile(os.path.join(first, "bin", "spark-submit"))


def test_a_damaged_or_foreign_shared_home_is_not_used(temp_dir: Path) -> None:
    home = session._launch_home("local[2]", session.default_config(), None)
    assert home is not None
    os.unlink(os.path.join(home, "jars"))

    assert session._launch_home("local[2]", session.default_config(), None) is None
    assert [path.name for path in temp_dir.iterdir()] == [os.path.basename(home)]  # no leftover copy


def test_a_link_planted_in_place_of_the_shared_home_is_not_followed(temp_dir: Path) -> None:
    home = session._launch_home("local[2]", session.default_config(), None)
    assert home is not None
    shutil.rmtree(home)
    os.symlink(REAL_HOME, home)  # its entries are the real ones, but it is not our directory

    assert session._launch_home("local[2]", session.default_config(), None) is None
    assert os.path.islink(home) and len(list(temp_dir.iterdir())) == 1


def test_another_spark_distribution_or_worker_python_keeps_the_callers_home(
    temp_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    distribution = tmp_path / "spark-4.0.0-bin"
    (distribution / "python" / "lib").mkdir(parents=True)
    (distribution / "python" / "lib" / "pyspark.zip").write_bytes(b"")
    other_python = {**session.default_config(), "spark.pyspark.python": "/opt/other/bin/python3"}

    assert session._launch_home("local[2]", other_python, None) is None
    monkeypatch.setenv("SPARK_HOME", str(distribution))
    assert session._launch_home("local[2]", session.default_config(), None) is None
    assert list(temp_dir.iterdir()) == []


def test_a_local_cluster_launch_gets_its_own_home_with_a_work_directory(temp_dir: Path) -> None:
    log = io.BytesIO()

    home = session._launch_home("local-cluster[2,1,1024]", session.default_config(), log)

    assert home is not None and os.path.dirname(home) == str(temp_dir)
    assert os.path.basename(home).startswith("dbt-lancens-spark-home-")
    assert os.path.isdir(os.path.join(home, "work")) and not os.path.islink(os.path.join(home, "work"))
    assert "python" not in _links(home)
    assert f"{home}/work" in log.getvalue().decode()


class _PysparkOrigin(DataSource):
    """One row: where the planner worker (``schema``) and the executor worker (``read``) imported
    pyspark from."""

    @classmethod
    def name(cls) -> str:
        return "pyspark_origin"

    def schema(self) -> str:
        self.planner = pyspark.__file__  # create_data_source pickles this instance for the reader
        return "planner string, executor string"

    def reader(self, schema: Any) -> DataSourceReader:
        return _PysparkOriginReader(self.planner)


class _PysparkOriginReader(DataSourceReader):
    def __init__(self, planner: str) -> None:
        self.planner = planner

    def partitions(self) -> list[InputPartition]:
        return [InputPartition(0)]

    def read(self, partition: InputPartition) -> Iterator[tuple[str, str]]:
        yield (self.planner, pyspark.__file__)


def test_python_workers_import_pyspark_from_site_packages(spark: Any) -> None:
    """Every kind of worker (here a planner and an executor) imports the interpreter's pyspark."""
    spark.dataSource.register(_PysparkOrigin)

    def report(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for _ in batches:
            pass
        yield pa.RecordBatch.from_pylist([{"origin": pyspark.__file__}])

    reports = spark.range(2, numPartitions=2).mapInArrow(report, "origin string").collect()
    (executor_via_arrow,) = {row.origin for row in reports}
    ((planner, executor),) = spark.read.format("pyspark_origin").load().collect()

    installed = pyspark.__file__
    assert ".zip" not in installed
    assert {planner, executor, executor_via_arrow} == {installed}


def test_a_launch_puts_the_environment_back_without_deleting_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The session starts on a background thread while dbt parses, and dbt iterates os.environ (for
    secrets) whenever it builds an exception: a variable deleted during such an iteration raised
    KeyError in dbt's thread. Variables the launch set are put back, an unset one as its value that
    means the same to Spark, and never deleted."""
    monkeypatch.setenv("SPARK_HOME", "/opt/callers-spark")
    monkeypatch.delenv("SPARK_SUBMIT_OPTS", raising=False)
    launch = {"SPARK_HOME": "/tmp/our-home", "SPARK_SUBMIT_OPTS": "-Xshare:auto"}
    absent = {"SPARK_HOME": REAL_HOME, "SPARK_SUBMIT_OPTS": ""}
    with session._launch_environment(launch, absent):
        assert {name: os.environ[name] for name in launch} == launch
    assert os.environ["SPARK_HOME"] == "/opt/callers-spark"
    assert os.environ["SPARK_SUBMIT_OPTS"] == ""
