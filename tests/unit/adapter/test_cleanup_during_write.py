"""A cleanup with a short grace racing a write (issue #50 part 3): the write fails with an error that
says its files were removed and that a concurrent cleanup may have done it, never a raw
`[PYTHON_EXCEPTION]` traceback; nothing is published.

The race is made certain, not timed: the Spark task that feeds the write runs a real
`cleanup_namespace(grace 0, allow_short_grace)` of the root after its first batches, while Lance
writes the table's first new data file (as a temp file beside it): a rebuild of an existing table,
whose directory is registered, so only its files can be taken.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pyarrow as pa
import pytest

from dbt.adapters.lancens.commits.writes import write_frame
from dbt.adapters.lancens.metadata import maintenance
from dbt.adapters.lancens.namespace import DirectoryNamespace
from dbt.adapters.lancens.runtime.errors import spark_error_message, storage_refusal_message
from tests.unit.adapter.helpers import shop_runtime

pytestmark = pytest.mark.usefixtures("spark")


def _until_lance_writes(namespace: DirectoryNamespace) -> None:
    """Wait (at most a minute) until a table directory of the root holds a data file Lance is
    writing (its temp file), so the cleanup after it meets the write in progress."""
    storage = namespace.storage
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if any(".tmp" in path for entry in storage.ls(storage.root) for path in storage.files(entry["name"])):
            return
        time.sleep(0.05)


@pytest.mark.parametrize("connector", ["jvm", "python"])
def test_a_write_whose_files_a_cleanup_removed_says_so(tmp_path: Path, connector: str) -> None:
    """Whichever writer runs the tasks (lance-core in the JVM, pylance in a Python worker)."""
    runtime = shop_runtime(tmp_path)
    runtime.choose_connector(connector, None)
    properties = runtime.namespace.properties

    def clean_midway(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for number, batch in enumerate(batches):
            if number == 4:
                namespace = DirectoryNamespace.from_properties(properties)
                _until_lance_writes(namespace)
                maintenance.cleanup_namespace(namespace, grace=timedelta(0), allow_short_grace=True)
            yield batch

    runtime.activate()
    write_frame(runtime, ["shop", "big"], runtime.spark.range(0, 10), "overwrite", {})
    frame = (
        runtime.spark.range(0, 200_000, numPartitions=1)
        .mapInArrow(clean_midway, "id long")
        .selectExpr("id", "repeat('x', 64) as pad")
    )
    with pytest.raises(Exception) as failed:  # noqa: PT011 - Spark's PythonException, a worker error
        write_frame(runtime, ["shop", "big"], frame, "overwrite", {})

    text = spark_error_message(failed.value)
    message = storage_refusal_message(failed.value, text, runtime.namespace.root)
    assert message is not None, text
    assert "concurrent `cleanup_namespace`" in message and "allow_short_grace" in message
    assert "_shop$big" in message  # the table, by its directory
    assert "Traceback" not in message and "PYTHON_EXCEPTION" not in message
    assert runtime.namespace.describe_table(["shop", "big"]).version == 1  # the rebuild published nothing
