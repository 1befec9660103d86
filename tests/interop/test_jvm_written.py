"""Tables whose data files lance-core 7 wrote in Spark's JVM (`spark/jvm_writer.py`), committed by
pylance as the adapter commits them, used by native tools: pylance 14 reads, filters, indexes,
searches and compacts them, LanceDB opens and searches them, lance-core reads them again after a
pylance commit on top; on S3 (moto's real server) the files land with the storage options the JVM
got, and a failed write there leaves no object behind."""

from __future__ import annotations

import lance
import lancedb
import pyarrow as pa
import pyarrow.fs as pafs
import pytest
from pyspark.sql import DataFrame, SparkSession

from dbt.adapters.lancens.spark import jvm_connector
from dbt.adapters.lancens.spark.jvm_writer import NEW_TABLE_STORAGE_VERSION, JvmWrite, write_fragments

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("label", pa.string()),
        pa.field("vec", pa.list_(pa.field("item", pa.float32()), 4)),
    ]
)
SELECT = (
    "select id, concat('label ', cast(id % 10 as string)) as label, "
    "array(cast(id as float), cast(id % 7 as float), 1.0f, cast(id / 2 as float)) as vec "
    "from range({start}, {stop}, 1, 2) as t(id)"
)


def _frame(spark: SparkSession, start: int, stop: int) -> DataFrame:
    return spark.sql(SELECT.format(start=start, stop=stop))


def _jvm_commit(
    spark: SparkSession, uri: str, start: int, stop: int, storage_options: dict[str, str] | None = None
) -> lance.LanceDataset:
    """Rows [start, stop) written from the JVM and committed by pylance: an Overwrite for a new
    table, an Append (with the table's own data-file version) for an existing one."""
    options = storage_options or {}
    try:
        current: lance.LanceDataset | None = lance.dataset(uri, storage_options=options)
    except (OSError, ValueError):
        current = None
    version = current.data_storage_version if current is not None else NEW_TABLE_STORAGE_VERSION
    target = JvmWrite(uri, SCHEMA, version, overwrite=current is None, storage_options=options)
    fragments = write_fragments(_frame(spark, start, stop), target)
    operation = (
        lance.LanceOperation.Overwrite(SCHEMA, fragments)
        if current is None
        else lance.LanceOperation.Append(fragments)
    )
    return lance.LanceDataset.commit(
        uri,
        operation,
        read_version=current.version if current is not None else None,
        storage_options=options or None,
    )


def test_native_tools_use_a_jvm_written_table(spark: SparkSession, tmp_path) -> None:
    uri = str(tmp_path / "items.lance")
    _jvm_commit(spark, uri, 0, 2000)
    dataset = _jvm_commit(spark, uri, 2000, 3000)  # a second JVM write appends
    assert dataset.schema == SCHEMA
    assert dataset.count_rows() == 3000
    assert dataset.to_table(filter="id >= 2990", columns=["id"]).column("id").to_pylist() == list(
        range(2990, 3000)
    )
    assert dataset.take([5]).to_pylist() == [{"id": 5, "label": "label 5", "vec": [5.0, 5.0, 1.0, 2.5]}]

    # pylance builds an index on it, searches it, compacts it; lance-core still reads it
    dataset.create_index("vec", index_type="IVF_FLAT", num_partitions=1)
    nearest = dataset.to_table(nearest={"column": "vec", "q": [42.0, 0.0, 1.0, 21.0], "k": 1}, columns=["id"])
    assert nearest.column("id").to_pylist() == [42]
    dataset.optimize.compact_files()
    dataset = lance.dataset(uri)
    assert dataset.count_rows() == 3000
    assert jvm_connector.unreadable(spark, uri, None, {}) is None
    assert spark.read.format("lance_jvm").load(uri).where("id = 2999").first().label == "label 9"

    # LanceDB opens the same table and searches it
    table = lancedb.connect(str(tmp_path)).open_table("items")
    hits = table.search([42.0, 0.0, 1.0, 21.0], vector_column_name="vec").limit(1).to_list()
    assert [hit["id"] for hit in hits] == [42]


def _objects(s3_server, prefix: str) -> list[str]:
    fs = pafs.S3FileSystem(
        access_key="testing",
        secret_key="testing",
        endpoint_override=s3_server.endpoint,
        scheme="http",
        region="us-east-1",
    )
    selector = pafs.FileSelector(f"{s3_server.bucket}/{prefix}", recursive=True, allow_not_found=True)
    return sorted(info.path for info in fs.get_file_info(selector) if info.type == pafs.FileType.File)


def test_jvm_writes_reach_s3_and_a_failed_one_leaves_nothing(spark: SparkSession, s3_server) -> None:
    uri = s3_server.uri("jvm-written/items.lance")
    options = s3_server.storage_options
    dataset = _jvm_commit(spark, uri, 0, 1000, options)
    assert dataset.count_rows() == 1000
    assert jvm_connector.unreadable(spark, uri, None, options) is None
    before = _objects(s3_server, "jvm-written")
    data_files = [path for path in before if "/data/" in path]
    assert data_files

    # the last row's NULL id fails its task after the other task (maybe) finished its file
    failing = spark.sql(
        "select case when id = 1999 then null else id end as id, 'x' as label, "
        "array(1.0f, 2.0f, 3.0f, 4.0f) as vec from range(1000, 2000, 1, 2) as t(id)"
    )
    target = JvmWrite(uri, SCHEMA, dataset.data_storage_version, overwrite=False, storage_options=options)
    with pytest.raises(Exception, match="column id is NOT NULL"):
        write_fragments(failing, target)
    assert _objects(s3_server, "jvm-written") == before
    assert lance.dataset(uri, storage_options=options).count_rows() == 1000
