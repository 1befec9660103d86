"""Deletion files written by JVM tasks (`spark/jvm_deletions.py`, the connector's FragmentDeletions):
pylance reads them as its own, a fragment left without rows is removed, a deletion file already
there is kept in the new one, and an address named twice fails before anything is committed."""

from __future__ import annotations

from pathlib import Path

import lance
import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from dbt.adapters.lancens.spark.jvm_deletions import delete_in_jvm


def _table(tmp_path: Path) -> tuple[str, lance.LanceDataset]:
    """Three fragments of 100 rows (ids 0-299); row 150 already deleted (a deletion file)."""
    uri = str(tmp_path / "t.lance")
    lance.write_dataset(pa.table({"id": pa.array(range(300), pa.int64())}), uri, max_rows_per_file=100)
    dataset = lance.dataset(uri)
    dataset.delete("id = 150")
    return uri, lance.dataset(uri)


def _addresses(dataset: lance.LanceDataset, where: str) -> list[int]:
    return dataset.to_table(filter=where, with_row_address=True).column("_rowaddr").to_pylist()


def test_jvm_tasks_delete_the_rows_pylance_then_reads_as_deleted(spark: SparkSession, tmp_path: Path) -> None:
    uri, dataset = _table(tmp_path)
    first, second, third = dataset.get_fragments()
    doomed = _addresses(dataset, "id < 100 OR (id >= 100 AND id < 110)")
    frame = spark.createDataFrame([(address,) for address in doomed], "a bigint")

    removed, updated = delete_in_jvm(frame, dataset, uri, {})

    assert removed == [first.fragment_id]  # every row of it deleted: the fragment goes
    assert [fragment.id for fragment in updated] == [second.fragment_id]
    (changed,) = updated
    assert changed.deletion_file is not None and changed.deletion_file.num_deleted_rows == 11  # 10 + row 150
    assert changed.files == second.metadata.files  # its data files untouched
    operation = lance.LanceOperation.Update(removed_fragment_ids=removed, updated_fragments=updated)
    after = lance.LanceDataset.commit(uri, operation, read_version=dataset.version)
    expected = [i for i in range(110, 300) if i != 150]
    assert sorted(after.to_table().column("id").to_pylist()) == expected
    assert after.get_fragment(third.fragment_id).metadata.deletion_file is None


def test_an_address_named_twice_fails_and_nothing_is_committed(spark: SparkSession, tmp_path: Path) -> None:
    uri, dataset = _table(tmp_path)
    twice = _addresses(dataset, "id = 7") * 2
    frame = spark.createDataFrame([(address,) for address in twice], "a bigint")
    with pytest.raises(ValueError, match="matched twice"):
        delete_in_jvm(frame, dataset, uri, {}, ValueError("matched twice"))
    assert lance.dataset(uri).version == dataset.version
    assert lance.dataset(uri).count_rows() == 299
