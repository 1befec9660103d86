"""The JVM writer's fixed choices still match pylance's (`spark/jvm_writer.py`)."""

from __future__ import annotations

from pathlib import Path

import lance
import pyarrow as pa

from dbt.adapters.lancens.spark.jvm_writer import JVM_STORAGE_VERSIONS, NEW_TABLE_STORAGE_VERSION


def test_a_new_table_gets_the_data_file_version_pylance_gives_it(tmp_path: Path) -> None:
    """A new table written from the JVM must carry the version the Python path would have made;
    when pylance's default moves, this fails and the constant (and lance-core's ability to write
    the new version) must be looked at again."""
    dataset = lance.write_dataset(pa.table({"a": [1]}), str(tmp_path / "t.lance"))
    assert dataset.data_storage_version == NEW_TABLE_STORAGE_VERSION
    assert NEW_TABLE_STORAGE_VERSION in JVM_STORAGE_VERSIONS
